//! The BPE pre-tokenizers: llama.cpp's `llama_vocab_pre_type`, the `tokenizer.ggml.pre`
//! names that select them, the flags those names set, and their split patterns.
//!
//! The patterns are the ones llama.cpp runs (mostly the models' `tokenizer.json`
//! patterns, with `(?i:...)` spelled out as character sets).

use crate::Error;

/// A pre-tokenizer: how byte-level BPE splits text into words before merging.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PreTokenizer {
    /// `default`: llama.cpp's fallback (punctuation runs, GPT-2's pattern, digit runs in
    /// threes).
    Default,
    /// GPT-2's pattern (`gpt-2`, `mpt`, `olmo`, `phi-2`, `jais`, `roberta-bpe`, ...).
    Gpt2,
    /// Llama 3's pattern: digits in groups of up to three (`llama3`, `llama-bpe`,
    /// `dbrx`, `smaug-bpe`, `chatglm-bpe`, `falcon3`, `pixtral`, ...).
    Llama3,
    /// Qwen 2's pattern: Llama 3's with single digits (`qwen2`, `deepseek-r1-qwen`,
    /// `stablelm2`, `megrez`, `grok-2`, `hunyuan`, ...).
    Qwen2,
    /// Qwen 3.5's pattern: Qwen 2's with combining marks kept in words (`qwen35`).
    Qwen35,
    /// Single digits, then GPT-2's pattern (`starcoder`, `refact`, `command-r`,
    /// `smollm`, `codeshell`, `exaone`, `minerva-7b`, `mellum2`).
    Starcoder,
    /// `falcon`.
    Falcon,
    /// `deepseek-llm`.
    DeepseekLlm,
    /// `deepseek-coder`.
    DeepseekCoder,
    /// `deepseek-v3` (also `hunyuan-dense`, `hy_v4`, `joyai-llm`).
    Deepseek3,
    /// `bloom`, `poro-chat`, `gpt3-finnish`.
    Bloom,
    /// `viking`.
    Viking,
    /// Mistral's Tekken (`tekken`).
    Tekken,
    /// `chameleon`.
    Chameleon,
    /// GPT-4o's o200k pattern (`gpt-4o`, `llama4`, `minimax-m2`, ...).
    Gpt4o,
    /// `seed-coder`.
    SeedCoder,
    /// `bailingmoe`, `bailingmoe2`, `llada-moe`.
    Bailingmoe,
    /// `ufakzeka`: Qwen 2's pattern without English contractions.
    Ufakzeka,
    /// `minicpm5`.
    Minicpm5,
    /// `exaone-moe`.
    ExaoneMoe,
}

/// What a `tokenizer.ggml.pre` name selects: the pre-tokenizer and the flags llama.cpp
/// sets with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Preset {
    pub(crate) kind: PreTokenizer,
    /// Undo the space GPT-2-era tokenizers put before punctuation when decoding.
    pub(crate) clean_spaces: bool,
    /// A word that is a token is that token, whatever the merges say.
    pub(crate) ignore_merges: bool,
    /// The default of `add_bos_token`.
    pub(crate) add_bos: bool,
    /// The name drops the BOS token unless the file names one.
    pub(crate) no_default_bos: bool,
}

const fn preset(kind: PreTokenizer) -> Preset {
    Preset { kind, clean_spaces: true, ignore_merges: false, add_bos: false, no_default_bos: false }
}

const fn unclean(p: Preset) -> Preset {
    Preset { clean_spaces: false, ..p }
}

const fn ignoring_merges(p: Preset) -> Preset {
    Preset { ignore_merges: true, ..p }
}

const fn with_bos(p: Preset) -> Preset {
    Preset { add_bos: true, ..p }
}

const fn without_bos(p: Preset) -> Preset {
    Preset { no_default_bos: true, ..p }
}

use PreTokenizer as P;

/// Every supported name, with what it selects (llama.cpp's `llama_vocab::impl::load`).
const PRESETS: &[(&str, Preset)] = &[
    ("default", preset(P::Default)),
    ("llama3", with_bos(ignoring_merges(preset(P::Llama3)))),
    ("llama-v3", with_bos(ignoring_merges(preset(P::Llama3)))),
    ("llama-bpe", with_bos(ignoring_merges(preset(P::Llama3)))),
    ("falcon3", with_bos(ignoring_merges(preset(P::Llama3)))),
    ("falcon-h1", with_bos(ignoring_merges(preset(P::Llama3)))),
    ("pixtral", with_bos(ignoring_merges(preset(P::Llama3)))),
    ("midm-2.0", with_bos(ignoring_merges(preset(P::Llama3)))),
    ("lfm2", with_bos(ignoring_merges(preset(P::Llama3)))),
    ("jina-v5-nano", with_bos(ignoring_merges(preset(P::Llama3)))),
    ("dbrx", preset(P::Llama3)),
    ("smaug-bpe", preset(P::Llama3)),
    ("chatglm-bpe", without_bos(preset(P::Llama3))),
    ("glm4", without_bos(ignoring_merges(preset(P::Llama3)))),
    ("glm5", without_bos(ignoring_merges(preset(P::Llama3)))),
    ("deepseek-llm", unclean(preset(P::DeepseekLlm))),
    ("deepseek-coder", unclean(preset(P::DeepseekCoder))),
    ("deepseek-v3", unclean(preset(P::Deepseek3))),
    ("hunyuan-dense", unclean(preset(P::Deepseek3))),
    ("hy_v4", unclean(preset(P::Deepseek3))),
    ("joyai-llm", unclean(preset(P::Deepseek3))),
    ("falcon", preset(P::Falcon)),
    ("mpt", preset(P::Gpt2)),
    ("starcoder", preset(P::Starcoder)),
    ("gpt-2", preset(P::Gpt2)),
    ("phi-2", preset(P::Gpt2)),
    ("jina-es", preset(P::Gpt2)),
    ("jina-de", preset(P::Gpt2)),
    ("gigachat", preset(P::Gpt2)),
    ("jina-v2-es", preset(P::Gpt2)),
    ("jina-v2-de", preset(P::Gpt2)),
    ("a.x-4.0", preset(P::Gpt2)),
    ("mellum", preset(P::Gpt2)),
    ("modern-bert", preset(P::Gpt2)),
    ("jina-v1-en", preset(P::Gpt2)),
    ("jina-v2-code", preset(P::Gpt2)),
    ("roberta-bpe", preset(P::Gpt2)),
    ("olmo", preset(P::Gpt2)),
    ("jais", preset(P::Gpt2)),
    ("exaone4", preset(P::Gpt2)),
    ("trillion", unclean(preset(P::Gpt2))),
    ("granite-docling", unclean(preset(P::Gpt2))),
    ("refact", preset(P::Starcoder)),
    ("command-r", unclean(preset(P::Starcoder))),
    ("smollm", unclean(preset(P::Starcoder))),
    ("codeshell", preset(P::Starcoder)),
    ("exaone", preset(P::Starcoder)),
    ("minerva-7b", preset(P::Starcoder)),
    ("mellum2", preset(P::Starcoder)),
    ("qwen2", unclean(preset(P::Qwen2))),
    ("deepseek-r1-qwen", unclean(preset(P::Qwen2))),
    ("kormo", unclean(preset(P::Qwen2))),
    ("f2llmv2", unclean(preset(P::Qwen2))),
    ("stablelm2", preset(P::Qwen2)),
    ("megrez", preset(P::Qwen2)),
    ("hunyuan", unclean(preset(P::Qwen2))),
    ("solar-open", unclean(preset(P::Qwen2))),
    ("grok-2", unclean(preset(P::Qwen2))),
    ("qwen35", unclean(preset(P::Qwen35))),
    ("poro-chat", unclean(preset(P::Bloom))),
    ("bloom", preset(P::Bloom)),
    ("gpt3-finnish", preset(P::Bloom)),
    ("viking", unclean(preset(P::Viking))),
    ("tekken", with_bos(ignoring_merges(unclean(preset(P::Tekken))))),
    ("chameleon", with_bos(unclean(preset(P::Chameleon)))),
    ("gpt-4o", unclean(preset(P::Gpt4o))),
    ("llama4", unclean(preset(P::Gpt4o))),
    ("kanana2", unclean(preset(P::Gpt4o))),
    ("talkie", unclean(preset(P::Gpt4o))),
    ("minimax-m2", unclean(preset(P::Gpt4o))),
    ("seed-coder", unclean(preset(P::SeedCoder))),
    ("bailingmoe", unclean(preset(P::Bailingmoe))),
    ("bailingmoe2", unclean(preset(P::Bailingmoe))),
    ("llada-moe", unclean(preset(P::Bailingmoe))),
    ("ufakzeka", unclean(preset(P::Ufakzeka))),
    ("minicpm5", ignoring_merges(preset(P::Minicpm5))),
    ("exaone-moe", preset(P::ExaoneMoe)),
];

const GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)";
const LLAMA3: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const QWEN2: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const BLOOM: &str = r" ?[^(\s|.,!?…。，、।۔،)]+";
const CJK_DEEPSEEK: &str = "[一-龥ࠀ-一가-퟿]+";

impl PreTokenizer {
    /// Every `tokenizer.ggml.pre` name this crate accepts.
    pub const NAMES: &'static [&'static str] = &{
        let mut names = [""; PRESETS.len()];
        let mut i = 0;
        while i < PRESETS.len() {
            names[i] = PRESETS[i].0;
            i += 1;
        }
        names
    };

    /// The pre-tokenizer a `tokenizer.ggml.pre` name selects; an unknown name is an
    /// error naming it. `None` or an empty name is `default`, as in llama.cpp.
    pub fn from_gguf_name(name: Option<&str>) -> Result<PreTokenizer, Error> {
        Ok(preset_for(name)?.kind)
    }

    /// The split patterns, applied in order (see `split`).
    pub(crate) fn patterns(self) -> Vec<&'static str> {
        match self {
            P::Default => vec![r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", "[0-9][0-9][0-9]"],
            P::Gpt2 => vec![GPT2],
            P::Llama3 => vec![LLAMA3],
            P::Qwen2 => vec![QWEN2],
            P::Qwen35 => vec![
                r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            ],
            P::Starcoder => vec![r"\p{N}", GPT2],
            P::Falcon => vec![r"[\p{P}\$\+<=>\^~\|`]+", GPT2, "[0-9][0-9][0-9]"],
            P::DeepseekLlm => vec![
                "[\r\n]",
                "\\s?[A-Za-z\u{B5}\u{C0}-\u{D6}\u{D8}-\u{F6}\u{F8}-\u{1BA}\u{1BC}-\u{1BF}\u{1C4}-\u{293}\u{295}-\u{2AF}\u{370}-\u{373}\u{376}\u{377}\u{37B}-\u{37D}\u{37F}\u{386}\u{388}-\u{38A}\u{38C}\u{38E}-\u{3A1}\u{3A3}-\u{3F5}\u{3F7}-\u{481}\u{48A}-\u{52F}\u{531}-\u{556}\u{10A0}-\u{10C5}\u{13A0}-\u{13F5}\u{13F8}-\u{13FD}\u{1C90}-\u{1CBA}\u{1CBD}-\u{1CBF}\u{1D00}-\u{1D2B}\u{1D6B}-\u{1D77}\u{1D79}-\u{1D9A}\u{1E00}-\u{1F15}\u{1F18}-\u{1F1D}\u{1F20}-\u{1F45}\u{1F48}-\u{1F4D}\u{1F50}-\u{1F57}\u{1F59}\u{1F5B}\u{1F5D}\u{1F5F}-\u{1F7D}\u{1F80}-\u{1FB4}\u{1FB6}-\u{1FBC}\u{1FBE}\u{1FC2}-\u{1FC4}\u{1FC6}-\u{1FCC}\u{1FD0}-\u{1FD3}\u{1FD6}-\u{1FDB}\u{1FE0}-\u{1FEC}\u{1FF2}-\u{1FF4}\u{1FF6}-\u{1FFC}\u{2102}\u{2107}\u{210A}-\u{2113}\u{2115}\u{2119}-\u{211D}\u{2124}\u{2126}\u{2128}\u{212A}-\u{212D}\u{212F}-\u{2134}\u{2139}\u{213C}-\u{213F}\u{2145}-\u{2149}\u{214E}\u{2183}\u{2184}\u{2C00}-\u{2C7B}\u{2C7E}-\u{2CE4}\u{2CEB}-\u{2CEE}\u{2CF2}\u{2CF3}\u{A640}-\u{A66D}\u{A680}-\u{A69B}\u{A722}-\u{A76F}\u{A771}-\u{A787}\u{A78B}-\u{A78E}\u{AB70}-\u{ABBF}\u{FB00}-\u{FB06}\u{FB13}-\u{FB17}\u{FF21}-\u{FF3A}\u{FF41}-\u{FF5A}\u{10400}-\u{1044F}\u{104B0}-\u{104D3}\u{104D8}-\u{104FB}\u{10C80}-\u{10CB2}\u{10CC0}-\u{10CF2}\u{118A0}-\u{118DF}\u{1E900}-\u{1E943}]+",
                r"\s?[!-/:-~！-／：-～‘-‟　-。]+",
                r"\s+$",
                CJK_DEEPSEEK,
                r"\p{N}+",
            ],
            P::DeepseekCoder => vec!["[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", CJK_DEEPSEEK, r"\p{N}"],
            P::Deepseek3 => vec![
                r"\p{N}{1,3}",
                "[一-龥぀-ゟ゠-ヿ]+",
                "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
            ],
            P::Bloom => vec![BLOOM],
            P::Viking => vec![BLOOM, r"\p{N}"],
            P::Tekken => vec![
                r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            ],
            P::Chameleon => vec![
                "<sentinel:[0-9]+>",
                "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z",
                r"([\t\n]|    |  )",
                r"\p{N}",
                r"[\p{P}!-/:-@\[-`{-~]",
                GPT2,
            ],
            P::Gpt4o => vec![
                r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            ],
            P::SeedCoder => vec![
                r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+",
            ],
            P::Bailingmoe => vec![
                r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+",
            ],
            P::Ufakzeka => vec![r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
            P::Minicpm5 => vec![
                r"\p{N}{1,3}",
                r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            ],
            P::ExaoneMoe => vec![
                r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+",
            ],
        }
    }
}

/// What a `tokenizer.ggml.pre` name selects.
pub(crate) fn preset_for(name: Option<&str>) -> Result<Preset, Error> {
    let name = match name {
        None | Some("") => "default",
        Some(name) => name,
    };
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, p)| *p)
        .ok_or_else(|| Error::UnknownPreTokenizer(name.to_string()))
}
