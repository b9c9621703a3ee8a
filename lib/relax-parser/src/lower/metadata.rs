//! Constants: `metadata["relax.expr.Constant"][i]` references and the project's own
//! data lines.
//!
//! TVM prints large constants as references and omits their data. The project's printer
//! appends one comment line per constant that has data (TVM ignores comments):
//!
//! ```text
//! # metadata["relax.expr.Constant"][0] = float32 2x2 0000803f000000400000404000008040
//! ```
//!
//! that is: the reference, `=`, the dtype, the dims joined by `x` (or `scalar` for a 0-d
//! tensor), and the little-endian bytes in lowercase hex. A reference without a data line
//! becomes an opaque constant: it prints back unchanged but cannot be evaluated.

use std::collections::HashMap;

use relax_ir::{ConstData, ConstPayload, DataType};

use super::{Diags, sp};
use crate::ast;

/// Constant data read from the metadata comment lines, by `(key, index)`.
#[derive(Debug, Default)]
pub(crate) struct MetadataTable {
    entries: HashMap<(String, u32), ConstData>,
}

impl MetadataTable {
    /// Reads every `# metadata[...]` comment line; malformed lines are errors.
    pub fn read(lines: &[ast::Comment], d: &mut Diags) -> MetadataTable {
        let mut entries = HashMap::new();
        for c in lines {
            match parse_line(&c.text) {
                Some((key, index, data)) => {
                    entries.insert((key, index), data);
                }
                None => {
                    d.push(
                        relax_ir::Diagnostic::error(sp(c.span), "malformed metadata line")
                            .with_note("expected `# metadata[\"KEY\"][INDEX] = DTYPE DIMS|scalar HEXBYTES`"),
                    );
                }
            }
        }
        MetadataTable { entries }
    }
    /// Adds the data of a reference (from TVM's `load_json` preamble); a data line of the
    /// same reference wins.
    pub fn insert(&mut self, key: String, index: u32, data: ConstData) {
        self.entries.entry((key, index)).or_insert(data);
    }

    /// The data of a reference, if a data line supplied it.
    pub fn get(&self, key: &str, index: u32) -> Option<&ConstData> {
        self.entries.get(&(key.to_string(), index))
    }
}

fn parse_line(text: &str) -> Option<(String, u32, ConstData)> {
    let rest = text.strip_prefix('#')?.trim_start().strip_prefix("metadata[\"")?;
    let (key, rest) = rest.split_once("\"][")?;
    let (index, rest) = rest.split_once(']')?;
    let index: u32 = index.parse().ok()?;
    let rest = rest.trim_start().strip_prefix('=')?;
    let mut parts = rest.split_whitespace();
    let dtype = DataType::parse(parts.next()?)?;
    let dims = parts.next()?;
    let shape: Vec<i64> = if dims == "scalar" {
        Vec::new()
    } else {
        dims.split('x').map(|d| d.parse::<i64>().ok().filter(|&v| v >= 0)).collect::<Option<_>>()?
    };
    let hex = parts.next().unwrap_or("");
    if parts.next().is_some() || hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    // `get`, not indexing: the text may hold multi-byte characters.
    let bytes: Vec<u8> =
        (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect::<Option<_>>()?;
    let count: i64 = shape.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d))?;
    if (count as u128) * u128::from(dtype.bytes()) != bytes.len() as u128 {
        return None;
    }
    Some((key.to_string(), index, ConstData { dtype, shape: Some(shape), payload: ConstPayload::Data(bytes) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_data_lines() {
        let (k, i, d) =
            parse_line("# metadata[\"relax.expr.Constant\"][3] = float32 2x2 0000803f000000400000404000008040")
                .unwrap();
        assert_eq!((k.as_str(), i), ("relax.expr.Constant", 3));
        assert_eq!(d.shape, Some(vec![2, 2]));
        assert!(parse_line("# metadata[\"k\"][0] = float32 2x2 00").is_none());
        assert!(parse_line("# metadata[\"k\"][0] = int32 scalar 01000000").is_some());
        // Not hex, with a character boundary inside a byte pair: no panic.
        assert!(parse_line("# metadata[\"k\"][0] = uint8 2 a\u{e9}b").is_none());
        assert!(parse_line("# metadata[\"k\"][0] = uint8 2 +1+2").is_none());
    }
}
