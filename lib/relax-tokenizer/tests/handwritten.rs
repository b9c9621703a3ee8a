//! Small hand-written vocabularies whose expected ids follow from the algorithms by
//! hand: SentencePiece with byte fallback, byte-level BPE with merges, special tokens,
//! decoding, streaming and validation errors.

use relax_tokenizer::{DetokenizeOptions, Error, ModelKind, PreTokenizer, StreamDecoder, TokenType, Tokenizer, Vocab};

/// SPM: 0 `<unk>`, 1 `<s>`, 2 `</s>`, 3..=258 the byte tokens `<0x00>`..`<0xFF>`, then
/// pieces with scores.
const SPM_PIECES: &[(&str, f32)] = &[
    ("▁", -1.0),     // 259
    ("h", -2.0),     // 260
    ("e", -2.0),     // 261
    ("l", -2.0),     // 262
    ("o", -2.0),     // 263
    ("▁h", -3.0),    // 264
    ("el", -4.0),    // 265
    ("ll", -1.5),    // 266
    ("▁he", -2.5),   // 267
    ("▁hell", -5.0), // 268
    ("▁▁", -6.0),    // 269
];

fn spm_vocab() -> Vocab {
    let mut tokens: Vec<Vec<u8>> = vec![b"<unk>".to_vec(), b"<s>".to_vec(), b"</s>".to_vec()];
    let mut types = vec![TokenType::Unknown, TokenType::Control, TokenType::Control];
    let mut scores = vec![0.0; 3];
    for b in 0..=255u8 {
        tokens.push(format!("<0x{b:02X}>").into_bytes());
        types.push(TokenType::Byte);
        scores.push(0.0);
    }
    for (text, score) in SPM_PIECES {
        tokens.push(text.as_bytes().to_vec());
        types.push(TokenType::Normal);
        scores.push(*score);
    }
    let mut vocab = Vocab::new(ModelKind::Spm, tokens);
    vocab.scores = scores;
    vocab.token_types = types;
    vocab
}

fn spm() -> Tokenizer {
    Tokenizer::new(spm_vocab()).unwrap()
}

fn byte(b: u8) -> u32 {
    3 + b as u32
}

#[test]
fn spm_merges_by_score() {
    let t = spm();
    // "▁hell": "ll" (-1.5) first, then "▁h" (-3 beats "el" -4, which "ll" made stale),
    // then "▁he" (-2.5), then "▁hell" (-5).
    assert_eq!(t.encode("hell", false, false).unwrap(), vec![268]);
    // "▁hello": as above, then "o" stays alone.
    assert_eq!(t.encode("hello", false, false).unwrap(), vec![268, 263]);
    // No BOS unless add_special; the vocabulary's add_bos defaults to true for SPM.
    assert_eq!(t.encode("hell", true, false).unwrap(), vec![1, 268]);
    assert_eq!(t.encode("", true, false).unwrap(), vec![1]);
    assert_eq!(t.encode("", false, false).unwrap(), Vec::<u32>::new());
}

#[test]
fn spm_byte_fallback() {
    let t = spm();
    // "▁hé": "▁h" merges, "é" is not a piece: its bytes C3 A9.
    assert_eq!(t.encode("hé", false, false).unwrap(), vec![264, byte(0xC3), byte(0xA9)]);
    // Spaces become "▁": " h" is "▁▁h": "▁h" (-3) outranks "▁▁" (-6).
    assert_eq!(t.encode(" h", false, false).unwrap(), vec![259, 264]);
    // A newline has no piece: byte 0x0A.
    assert_eq!(t.encode("\n", false, false).unwrap(), vec![259, byte(b'\n')]);
}

#[test]
fn spm_special_tokens() {
    let t = spm();
    // Parsed, "</s>" is one token, and the text after it gets a space prefix again.
    assert_eq!(t.encode("hell</s>hell", false, true).unwrap(), vec![268, 2, 268]);
    // Not parsed, it is text: bytes, and "hell" without a space prefix.
    let mut expected = vec![268];
    expected.extend(b"</s>".iter().map(|&b| byte(b)));
    expected.extend([260, 261, 266]);
    assert_eq!(t.encode("hell</s>hell", false, false).unwrap(), expected);
}

#[test]
fn spm_decode() {
    let t = spm();
    assert_eq!(t.decode(&[268, 263]).unwrap(), "hello");
    // After a BOS that is kept, the space of the next token stays (llama.cpp).
    assert_eq!(t.decode(&[1, 268]).unwrap(), " hell");
    let removed = DetokenizeOptions { remove_special: true, unparse_special: false };
    // Removing the BOS token keeps the space too (llama.cpp's `remove_space = false`).
    assert_eq!(t.detokenize(&[1, 268], removed).unwrap(), b" hell");
    assert_eq!(t.detokenize(&[268], removed).unwrap(), b"hell");
    let printed = DetokenizeOptions { remove_special: false, unparse_special: true };
    assert_eq!(t.detokenize(&[1, 268, 2], printed).unwrap(), b"<s> hell</s>");
    assert_eq!(t.decode(&[264, byte(0xC3), byte(0xA9)]).unwrap(), "hé");
    // Half a character prints as U+FFFD; the bytes are kept by detokenize.
    assert_eq!(t.decode(&[264, byte(0xC3)]).unwrap(), "h\u{FFFD}");
    assert_eq!(t.token_to_piece(byte(0xC3), false).unwrap(), &[0xC3]);
    assert!(matches!(t.decode(&[10_000]), Err(Error::TokenIdOutOfRange { id: 10_000, .. })));
}

#[test]
fn stream_decoder_holds_partial_characters() {
    let t = spm();
    let mut stream = StreamDecoder::new();
    assert_eq!(stream.push(&t, 264).unwrap(), " h");
    assert_eq!(stream.push(&t, byte(0xC3)).unwrap(), "");
    assert_eq!(stream.push(&t, byte(0xA9)).unwrap(), "é");
    assert_eq!(stream.push(&t, 2).unwrap(), "");
    assert_eq!(stream.push(&t, byte(0xE2)).unwrap(), "");
    assert_eq!(stream.push(&t, 263).unwrap(), "\u{FFFD}o");
    assert_eq!(stream.push(&t, byte(0xF0)).unwrap(), "");
    assert_eq!(stream.finish(), "\u{FFFD}");
}

/// BPE: ids 0..=255 are the bytes in GPT-2's alphabet (id = byte), then the results
/// of the merges, then two special tokens.
const BPE_MERGES: &[&str] = &["h e", "l l", "he ll", "hell o", "Ġ w", "o r", "l d", "Ġw or", "Ġwor ld"];
const HELLO: u32 = 259;
const SPACE_WORLD: u32 = 264;
const ENDOFTEXT: u32 = 265;
const IM_START: u32 = 266;

fn gpt2_char(b: u8) -> char {
    let printable = matches!(b, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF);
    if printable {
        return b as char;
    }
    let n = (0..b).filter(|&x| !matches!(x, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF)).count();
    char::from_u32(256 + n as u32).unwrap()
}

fn bpe_vocab(pre: &str) -> Vocab {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| gpt2_char(b).to_string().into_bytes()).collect();
    for merge in BPE_MERGES {
        tokens.push(merge.replace(' ', "").into_bytes());
    }
    tokens.push(b"<|endoftext|>".to_vec());
    tokens.push(b"<|im_start|>".to_vec());
    let mut types = vec![TokenType::Normal; tokens.len()];
    types[ENDOFTEXT as usize] = TokenType::Control;
    types[IM_START as usize] = TokenType::UserDefined;
    let mut vocab = Vocab::new(ModelKind::Bpe, tokens);
    vocab.pre = Some(pre.to_string());
    vocab.token_types = types;
    vocab.merges = BPE_MERGES.iter().map(|m| m.to_string()).collect();
    vocab.special.bos = Some(ENDOFTEXT);
    vocab.special.eos = Some(ENDOFTEXT);
    vocab
}

fn bytes(text: &str) -> Vec<u32> {
    text.bytes().map(u32::from).collect()
}

#[test]
fn bpe_merges_by_rank() {
    let t = Tokenizer::new(bpe_vocab("gpt-2")).unwrap();
    assert_eq!(t.pre_tokenizer(), Some(PreTokenizer::Gpt2));
    assert_eq!(t.encode("hello world", false, false).unwrap(), vec![HELLO, SPACE_WORLD]);
    // Two spaces: GPT-2's pattern leaves one before " world".
    assert_eq!(t.encode("hello  world", false, false).unwrap(), vec![HELLO, 32, SPACE_WORLD]);
    // "é" is bytes C3 A9; "ll" still merges, "he" cannot ("h" is followed by C3).
    assert_eq!(t.encode("héllo", false, false).unwrap(), vec![104, 0xC3, 0xA9, 257, 111]);
    // gpt-2 does not add a BOS token by default.
    assert_eq!(t.encode("hello", true, false).unwrap(), vec![HELLO]);
}

#[test]
fn bpe_special_tokens() {
    let t = Tokenizer::new(bpe_vocab("gpt-2")).unwrap();
    assert_eq!(t.encode("hello<|endoftext|>", false, true).unwrap(), vec![HELLO, ENDOFTEXT]);
    let mut expected = vec![HELLO];
    expected.extend(bytes("<|endoftext|>"));
    assert_eq!(t.encode("hello<|endoftext|>", false, false).unwrap(), expected);
    // User-defined tokens are matched even without parse_special.
    assert_eq!(t.encode("<|im_start|>hello", false, false).unwrap(), vec![IM_START, HELLO]);
    assert!(t.is_eog(ENDOFTEXT));
    assert!(!t.is_eog(HELLO));
}

#[test]
fn bpe_llama3_adds_bos_and_takes_whole_words() {
    let t = Tokenizer::new(bpe_vocab("llama-bpe")).unwrap();
    assert!(t.flags().add_bos && t.flags().ignore_merges);
    assert_eq!(t.encode("hello world", true, false).unwrap(), vec![ENDOFTEXT, HELLO, SPACE_WORLD]);
    // Llama 3 splits digits in threes; each digit is its byte token here.
    assert_eq!(t.encode("12345", false, false).unwrap(), bytes("12345"));
}

#[test]
fn bpe_decode_and_clean_spaces() {
    let gpt2 = Tokenizer::new(bpe_vocab("gpt-2")).unwrap();
    let qwen2 = Tokenizer::new(bpe_vocab("qwen2")).unwrap();
    let mut ids = vec![HELLO];
    ids.extend(bytes(" , it 's"));
    assert_eq!(gpt2.decode(&ids).unwrap(), "hello, it's");
    assert_eq!(qwen2.decode(&ids).unwrap(), "hello , it 's");
    assert_eq!(gpt2.decode(&[HELLO, ENDOFTEXT]).unwrap(), "hello");
    let printed = DetokenizeOptions { remove_special: false, unparse_special: true };
    assert_eq!(gpt2.detokenize(&[HELLO, ENDOFTEXT], printed).unwrap(), b"hello<|endoftext|>");
    assert_eq!(gpt2.decode(&[0xC3, 0xA9]).unwrap(), "é");
}

#[test]
fn validation_errors_name_the_problem() {
    let mut v = bpe_vocab("no-such-pre");
    assert_eq!(Tokenizer::new(v.clone()).unwrap_err(), Error::UnknownPreTokenizer("no-such-pre".into()));
    let message = Tokenizer::new(v.clone()).unwrap_err().to_string();
    assert!(message.contains("'no-such-pre'") && message.contains("llama-bpe"), "{message}");
    v.pre = Some("gpt-2".into());
    v.merges.push("he zz".into());
    assert!(matches!(Tokenizer::new(v.clone()).unwrap_err(), Error::BadMerge { index: 9, .. }));
    v.merges.pop();
    v.merges.push("hello".into());
    assert!(matches!(Tokenizer::new(v.clone()).unwrap_err(), Error::BadMerge { .. }));
    v.merges.pop();
    v.special.eos = Some(999);
    assert_eq!(
        Tokenizer::new(v.clone()).unwrap_err(),
        Error::SpecialIdOutOfRange { which: "eos", id: 999, tokens: 267 }
    );
    v.special.eos = None;
    v.tokens[300 - 34] = b"h".to_vec();
    assert!(matches!(Tokenizer::new(v.clone()).unwrap_err(), Error::DuplicateToken { first: 104, second: 266, .. }));
    let mut s = spm_vocab();
    s.scores.pop();
    assert!(matches!(Tokenizer::new(s.clone()).unwrap_err(), Error::LengthMismatch { what: "scores", .. }));
    s.scores.push(f32::NAN);
    assert!(matches!(Tokenizer::new(s).unwrap_err(), Error::NanScore { .. }));
    // llama-bpe adds a BOS token; the default id 11 is not one of 3 tokens.
    let mut tiny = Vocab::from_strs(ModelKind::Bpe, &["a", "b", "ab"]);
    tiny.pre = Some("llama-bpe".into());
    assert_eq!(Tokenizer::new(tiny).unwrap_err(), Error::MissingSpecialToken { which: "BOS", flag: "add_bos" });
    assert_eq!(ModelKind::from_gguf_name("bert").unwrap_err(), Error::UnknownModel("bert".into()));
    assert_eq!(Tokenizer::new(Vocab::new(ModelKind::Spm, vec![])).unwrap_err(), Error::EmptyVocabulary);
}

#[test]
fn missing_byte_token_is_an_error() {
    let mut vocab = Vocab::from_strs(ModelKind::Spm, &["<unk>", "<s>", "</s>", "▁", "a"]);
    vocab.add_bos = Some(false);
    let t = Tokenizer::new(vocab).unwrap();
    assert_eq!(t.encode("a", false, false).unwrap(), vec![3, 4]);
    assert_eq!(t.encode("b", false, false).unwrap_err(), Error::NoByteToken { byte: b'b' });
}
