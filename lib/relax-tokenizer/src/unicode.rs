//! Character classes as llama.cpp's pre-tokenizers see them, and GPT-2's byte-to-unicode
//! map.
//!
//! llama.cpp gives every code point one class from its Unicode general category
//! (letter, number, punctuation, mark, symbol, other) and a whitespace flag (Unicode's
//! `White_Space` property, the same set as [`char::is_whitespace`]).

use unicode_general_category::{GeneralCategory as G, get_general_category};

/// The class of a code point: the `\p{..}` classes llama.cpp's patterns use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// `\p{N}`: decimal digits, letter numbers, other numbers.
    Number,
    /// `\p{L}`: all letters.
    Letter,
    /// `\p{P}`: all punctuation.
    Punctuation,
    /// `\p{M}`: combining marks.
    Mark,
    /// `\p{S}`: math, currency, modifier and other symbols.
    Symbol,
    /// Separators, controls, format, private use, unassigned.
    Other,
}

/// The class of `c`.
pub(crate) fn class_of(c: char) -> Class {
    match get_general_category(c) {
        G::UppercaseLetter | G::LowercaseLetter | G::TitlecaseLetter | G::ModifierLetter | G::OtherLetter => {
            Class::Letter
        }
        G::DecimalNumber | G::LetterNumber | G::OtherNumber => Class::Number,
        G::ConnectorPunctuation
        | G::DashPunctuation
        | G::OpenPunctuation
        | G::ClosePunctuation
        | G::InitialPunctuation
        | G::FinalPunctuation
        | G::OtherPunctuation => Class::Punctuation,
        G::NonspacingMark | G::SpacingMark | G::EnclosingMark => Class::Mark,
        G::MathSymbol | G::CurrencySymbol | G::ModifierSymbol | G::OtherSymbol => Class::Symbol,
        _ => Class::Other,
    }
}

/// Whether a byte maps to the code point of the same value in GPT-2's map (the
/// printable Latin-1 characters).
const fn byte_is_printable(b: u8) -> bool {
    matches!(b, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF)
}

/// GPT-2's byte-to-unicode map: printable bytes map to themselves, the other 68 to
/// U+0100 onwards in byte order.
const BYTE_TO_CP: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut next = 256u32;
    let mut b = 0usize;
    while b < 256 {
        if byte_is_printable(b as u8) {
            table[b] = b as u32;
        } else {
            table[b] = next;
            next += 1;
        }
        b += 1;
    }
    table
};

/// The character GPT-2's byte-level BPE writes for byte `b`.
pub(crate) fn byte_to_char(b: u8) -> char {
    char::from_u32(BYTE_TO_CP[b as usize]).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The byte a character of GPT-2's byte-level alphabet stands for; `None` for any
/// other character.
pub(crate) fn char_to_byte(c: char) -> Option<u8> {
    let cp = c as u32;
    if cp < 256 && byte_is_printable(cp as u8) {
        return Some(cp as u8);
    }
    if (256..256 + 68).contains(&cp) {
        return BYTE_TO_CP.iter().position(|&v| v == cp).map(|b| b as u8);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpt2_byte_map_is_a_bijection() {
        for b in 0..=255u8 {
            assert_eq!(char_to_byte(byte_to_char(b)), Some(b));
        }
        assert_eq!(byte_to_char(b' '), 'Ġ');
        assert_eq!(byte_to_char(b'\n'), 'Ċ');
        assert_eq!(byte_to_char(b'a'), 'a');
        assert_eq!(char_to_byte('€'), None);
    }

    #[test]
    fn classes() {
        assert_eq!(class_of('a'), Class::Letter);
        assert_eq!(class_of('é'), Class::Letter);
        assert_eq!(class_of('中'), Class::Letter);
        assert_eq!(class_of('7'), Class::Number);
        assert_eq!(class_of('½'), Class::Number);
        assert_eq!(class_of('!'), Class::Punctuation);
        assert_eq!(class_of('$'), Class::Symbol);
        assert_eq!(class_of('😀'), Class::Symbol);
        assert_eq!(class_of('\u{301}'), Class::Mark);
        assert_eq!(class_of('\u{E000}'), Class::Other);
    }
}
