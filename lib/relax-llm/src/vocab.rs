//! The tokenizer of a GGUF file: its `tokenizer.ggml.*` metadata as a
//! [`relax_tokenizer::Vocab`] (the keys llama.cpp's `llama_vocab::load` reads).
//!
//! Errors name the key: a missing token list, an array of the wrong type, scores or
//! token types that do not match the token count, an unknown tokenizer model.

use relax_gguf::Metadata;
use relax_tokenizer::{ModelKind, TokenType, Tokenizer, Vocab};

/// The tokenizer the metadata describes.
pub fn tokenizer_from_gguf(md: &Metadata) -> Result<Tokenizer, String> {
    Tokenizer::new(vocab_from_gguf(md)?).map_err(|e| format!("the file's tokenizer: {e}"))
}

/// The vocabulary the metadata describes.
pub fn vocab_from_gguf(md: &Metadata) -> Result<Vocab, String> {
    let err = |e: relax_gguf::GgufError| e.to_string();
    let model_name = md.get_str("tokenizer.ggml.model").map_err(err)?;
    let model =
        ModelKind::from_gguf_name(model_name).map_err(|e| format!("metadata key `tokenizer.ggml.model`: {e}"))?;
    let tokens: Vec<Vec<u8>> =
        md.get_str_array("tokenizer.ggml.tokens").map_err(err)?.iter().map(<[u8]>::to_vec).collect();
    let n = tokens.len();
    let mut vocab = Vocab::new(model, tokens);
    vocab.pre = md.get_str_opt("tokenizer.ggml.pre").map_err(err)?.map(str::to_string);
    if md.contains("tokenizer.ggml.scores") {
        let scores = md.get_f32_array("tokenizer.ggml.scores").map_err(err)?;
        if scores.len() != n {
            return Err(format!("metadata key `tokenizer.ggml.scores` has {} values for {n} tokens", scores.len()));
        }
        vocab.scores = scores.to_vec();
    }
    if md.contains("tokenizer.ggml.token_type") {
        let types = md.get_i32_array("tokenizer.ggml.token_type").map_err(err)?;
        if types.len() != n {
            return Err(format!("metadata key `tokenizer.ggml.token_type` has {} values for {n} tokens", types.len()));
        }
        vocab.token_types = types.iter().map(|&t| TokenType::from_gguf(t)).collect();
    }
    if md.contains("tokenizer.ggml.merges") {
        let merges = md.get_str_array("tokenizer.ggml.merges").map_err(err)?;
        vocab.merges = merges.iter().map(|m| String::from_utf8_lossy(m).into_owned()).collect();
    }
    let id = |k: &str| -> Result<Option<u32>, String> { md.get_u32_opt(&format!("tokenizer.ggml.{k}")).map_err(err) };
    let s = &mut vocab.special;
    s.bos = id("bos_token_id")?;
    s.eos = id("eos_token_id")?;
    s.eot = id("eot_token_id")?;
    s.eom = id("eom_token_id")?;
    s.unk = id("unknown_token_id")?;
    // llama.cpp's spelling.
    s.sep = id("seperator_token_id")?;
    s.pad = id("padding_token_id")?;
    s.mask = id("mask_token_id")?;
    s.fim_pre = id("fim_pre_token_id")?;
    s.fim_suf = id("fim_suf_token_id")?;
    s.fim_mid = id("fim_mid_token_id")?;
    s.fim_pad = id("fim_pad_token_id")?;
    s.fim_rep = id("fim_rep_token_id")?;
    s.fim_sep = id("fim_sep_token_id")?;
    let flag =
        |k: &str| -> Result<Option<bool>, String> { md.get_bool_opt(&format!("tokenizer.ggml.{k}")).map_err(err) };
    vocab.add_bos = flag("add_bos_token")?;
    vocab.add_eos = flag("add_eos_token")?;
    vocab.add_space_prefix = flag("add_space_prefix")?;
    vocab.remove_extra_whitespaces = flag("remove_extra_whitespaces")?;
    vocab.general_name = md.get_str_opt("general.name").map_err(err)?.map(str::to_string);
    Ok(vocab)
}
