//! Decoding: the text of each token (llama.cpp's `token_to_piece`), joining them
//! (`llama_detokenize`), and a streaming decoder that prints complete characters as
//! tokens arrive.

use crate::special::Attr;
use crate::unicode::char_to_byte;
use crate::{Error, ModelKind, Tokenizer};

/// The piece of a token as llama.cpp's cache holds it (`special = true`): control,
/// user-defined and unknown tokens verbatim; SPM normal tokens with `▁` as space;
/// byte tokens as their byte; BPE normal tokens mapped back from GPT-2's byte
/// alphabet; anything else (unused, undefined) empty.
pub(crate) fn piece(model: ModelKind, text: &[u8], attr: Attr) -> Vec<u8> {
    if attr.has(Attr(Attr::UNKNOWN.0 | Attr::CONTROL.0 | Attr::USER_DEFINED.0)) {
        return text.to_vec();
    }
    if attr.has(Attr::NORMAL) {
        return match model {
            ModelKind::Spm => unescape_spaces(text),
            ModelKind::Bpe => from_byte_alphabet(text),
        };
    }
    if attr.has(Attr::BYTE) {
        return vec![byte_of(text)];
    }
    Vec::new()
}

/// `▁` (U+2581) replaced by a space.
fn unescape_spaces(text: &[u8]) -> Vec<u8> {
    const ESCAPED: &[u8] = "▁".as_bytes();
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i..].starts_with(ESCAPED) {
            out.push(b' ');
            i += ESCAPED.len();
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    out
}

/// The byte of a byte token `<0xXX>`: its two characters after `<0x` read as C's
/// `strtol` reads hexadecimal (digits up to the first other character; none is 0).
fn byte_of(text: &[u8]) -> u8 {
    let digits = text.get(3..text.len().min(5)).unwrap_or(&[]);
    let mut value = 0u32;
    for &d in digits {
        match (d as char).to_digit(16) {
            Some(v) => value = value * 16 + v,
            None => break,
        }
    }
    value as u8
}

/// A BPE token's text mapped back from GPT-2's byte alphabet; a character outside it
/// becomes `[UNK_BYTE_0x<its UTF-8 in hex><the token's text>]`, as llama.cpp writes it.
fn from_byte_alphabet(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for chunk in text.utf8_chunks() {
        for c in chunk.valid().chars() {
            match char_to_byte(c) {
                Some(b) => out.push(b),
                None => unknown_byte(&mut out, c, text),
            }
        }
        for _ in chunk.invalid() {
            unknown_byte(&mut out, char::REPLACEMENT_CHARACTER, text);
        }
    }
    out
}

fn unknown_byte(out: &mut Vec<u8>, c: char, text: &[u8]) {
    out.extend_from_slice(b"[UNK_BYTE_0x");
    let mut buf = [0u8; 4];
    for b in c.encode_utf8(&mut buf).as_bytes() {
        out.extend_from_slice(format!("{b:02x}").as_bytes());
    }
    out.extend_from_slice(text);
    out.push(b']');
}

/// llama.cpp's `clean_up_tokenization_spaces`: drops the space before `?!.,`, around a
/// lone `'`, and before the contractions `'s 'm 're 've`.
pub(crate) fn clean_spaces(text: &mut Vec<u8>) {
    // " ?", " !", " .", " ,"
    let mut out: Vec<u8> = Vec::with_capacity(text.len());
    for (i, &x) in text.iter().enumerate() {
        if i > 0 && text[i - 1] == b' ' && matches!(x, b'?' | b'!' | b'.' | b',') {
            out.pop();
        }
        out.push(x);
    }
    // " ' " becomes "'"; llama.cpp overwrites the dropped space with NUL, which the
    // next character's check then sees.
    let mut src = std::mem::take(&mut out);
    let mut i = 0;
    while i < src.len() {
        let x = src[i];
        if i > 0 && x == b'\'' && i + 1 < src.len() && src[i - 1] == b' ' && src[i + 1] == b' ' {
            out.pop();
            out.push(x);
            src[i + 1] = 0;
            i += 2;
            continue;
        }
        out.push(x);
        i += 1;
    }
    // " 's", " 'm", " 're", " 've"
    let src = std::mem::take(&mut out);
    for (i, &x) in src.iter().enumerate() {
        if i > 0 && src[i - 1] == b' ' && x == b'\'' && i + 1 < src.len() {
            let x1 = src[i + 1];
            let x2 = src.get(i + 2).copied();
            let drop = matches!(x1, b's' | b'm')
                || (i + 2 < src.len() && matches!((x1, x2), (b'r', Some(b'e')) | (b'v', Some(b'e'))));
            if drop {
                out.pop();
            }
        }
        out.push(x);
    }
    *text = out;
}

/// Turns generated tokens into text as they arrive: bytes of a character split across
/// tokens are held until the character is complete, and invalid bytes print as U+FFFD.
#[derive(Debug, Default, Clone)]
pub struct StreamDecoder {
    pending: Vec<u8>,
}

impl StreamDecoder {
    /// A decoder at the start of a text.
    pub fn new() -> StreamDecoder {
        StreamDecoder::default()
    }

    /// The text that `id` completes. Control tokens print nothing; the leading space an
    /// SPM vocabulary adds to the first token is not removed (the generated tokens
    /// continue a prompt).
    pub fn push(&mut self, tokenizer: &Tokenizer, id: u32) -> Result<String, Error> {
        self.pending.extend_from_slice(tokenizer.token_to_piece(id, false)?);
        Ok(self.take_complete())
    }

    /// The rest of the text: any incomplete character prints as U+FFFD.
    pub fn finish(&mut self) -> String {
        let rest = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        rest
    }

    fn take_complete(&mut self) -> String {
        let mut out = String::new();
        let mut consumed = 0;
        for chunk in self.pending.utf8_chunks() {
            out.push_str(chunk.valid());
            consumed += chunk.valid().len();
            let invalid = chunk.invalid();
            if invalid.is_empty() {
                continue;
            }
            // An incomplete character at the very end may still be completed.
            if consumed + invalid.len() == self.pending.len() && could_continue(invalid) {
                break;
            }
            out.push(char::REPLACEMENT_CHARACTER);
            consumed += invalid.len();
        }
        self.pending.drain(..consumed);
        out
    }
}

/// Whether `bytes` (an invalid sequence) is the start of a UTF-8 character that more
/// bytes could complete.
fn could_continue(bytes: &[u8]) -> bool {
    let need = match bytes[0] {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return false,
    };
    bytes.len() < need && bytes[1..].iter().all(|&b| b & 0xC0 == 0x80)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_spaces_as_llama_cpp() {
        let mut t = b"Hello , world ! It 's a ' test ' they 're here .".to_vec();
        clean_spaces(&mut t);
        assert_eq!(t, b"Hello, world! It's a'test'they're here.".to_vec());
    }

    #[test]
    fn byte_tokens() {
        assert_eq!(byte_of(b"<0x41>"), 0x41);
        assert_eq!(byte_of(b"<0xfF>"), 0xFF);
        assert_eq!(byte_of(b"<0x4>"), 0x4);
        assert_eq!(byte_of(b"<0"), 0);
    }
}
