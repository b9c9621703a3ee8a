//! Constants that print as `metadata["relax.expr.Constant"][i]`, and the comment lines
//! that carry their data.
//!
//! A Relax constant that is not an inline scalar (see [`ConstData::is_inline_scalar`])
//! prints as a metadata reference; `i` counts distinct constants in order of first
//! appearance in the text. A module that references any prints, after its last line, an
//! empty line and then TVM's comment
//!
//! ```text
//! # Metadata omitted. Use show_meta=True in script() method to show it.
//! ```
//!
//! followed, for each referenced constant whose payload is [`ConstPayload::Data`] and whose
//! shape is known, in index order, by one **data line** (TVM ignores comments; the
//! project's parser reads these lines back):
//!
//! ```text
//! data-line := "# metadata[\"relax.expr.Constant\"][" INDEX "] = " DTYPE " " SHAPE [" " HEX]
//! INDEX     := decimal index of the reference, as printed in the text
//! DTYPE     := TVM dtype spelling ("float32", "int64", "bool", "float16x4", ...)
//! SHAPE     := "scalar" for a 0-d constant, else the dims in decimal joined by "x" ("2x3")
//! HEX       := the payload bytes (little-endian elements, row-major) as lowercase hex,
//!              two digits per byte; omitted (together with its space) when there are no bytes
//! ```
//!
//! Example: `# metadata["relax.expr.Constant"][0] = float32 2x2 0000803f000000400000404000008040`.
//! Opaque constants (no data) print no data line; a reference without a data line reads
//! back as an opaque placeholder whose type is its binding's annotation.
//! [`const_data_comment`] writes a line and [`parse_const_data_comment`] reads one.

use std::fmt::Write as _;

use crate::dtype::DataType;
use crate::module::{ConstData, ConstPayload};

/// The comment TVM prints after a module that references metadata.
pub const METADATA_OMITTED: &str = "# Metadata omitted. Use show_meta=True in script() method to show it.";

/// The text of a metadata reference.
pub fn metadata_ref(index: usize) -> String {
    format!("metadata[\"relax.expr.Constant\"][{index}]")
}

/// The data line of constant `index`, or `None` when it has no data or no known shape.
pub fn const_data_comment(index: usize, c: &ConstData) -> Option<String> {
    let ConstPayload::Data(bytes) = &c.payload else { return None };
    let shape = c.shape.as_ref()?;
    let mut s = format!("# {} = {} ", metadata_ref(index), c.dtype);
    if shape.is_empty() {
        s.push_str("scalar");
    } else {
        let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
        s.push_str(&dims.join("x"));
    }
    if !bytes.is_empty() {
        s.push(' ');
        for b in bytes {
            let _ = write!(s, "{b:02x}");
        }
    }
    Some(s)
}

/// Reads a data line (surrounding whitespace allowed). Returns the index and the constant,
/// or `None` if the line does not follow the grammar.
pub fn parse_const_data_comment(line: &str) -> Option<(usize, ConstData)> {
    let rest = line.trim().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("metadata[\"relax.expr.Constant\"][")?;
    let (idx, rest) = rest.split_once(']')?;
    let index: usize = idx.parse().ok()?;
    let rest = rest.trim_start().strip_prefix('=')?;
    let mut fields = rest.split_whitespace();
    let dtype = DataType::parse(fields.next()?)?;
    let shape_txt = fields.next()?;
    let shape: Vec<i64> = if shape_txt == "scalar" {
        Vec::new()
    } else {
        shape_txt.split('x').map(|d| d.parse::<i64>().ok().filter(|v| *v >= 0)).collect::<Option<_>>()?
    };
    let hex = fields.next().unwrap_or("");
    if fields.next().is_some() || hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let bytes = (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    Some((index, ConstData { dtype, shape: Some(shape), payload: ConstPayload::Data(bytes) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_lines_round_trip() {
        let bytes: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let c = ConstData { dtype: DataType::FLOAT32, shape: Some(vec![2, 2]), payload: ConstPayload::Data(bytes) };
        let line = const_data_comment(0, &c).unwrap();
        assert_eq!(line, "# metadata[\"relax.expr.Constant\"][0] = float32 2x2 0000803f000000400000404000008040");
        assert_eq!(parse_const_data_comment(&line), Some((0, c)));
        let s = ConstData { dtype: DataType::UINT8, shape: Some(vec![]), payload: ConstPayload::Data(vec![7]) };
        let line = const_data_comment(3, &s).unwrap();
        assert_eq!(line, "# metadata[\"relax.expr.Constant\"][3] = uint8 scalar 07");
        assert_eq!(parse_const_data_comment(&line), Some((3, s)));
        let empty = ConstData { dtype: DataType::INT64, shape: Some(vec![0, 3]), payload: ConstPayload::Data(vec![]) };
        let line = const_data_comment(1, &empty).unwrap();
        assert_eq!(line, "# metadata[\"relax.expr.Constant\"][1] = int64 0x3");
        assert_eq!(parse_const_data_comment(&line), Some((1, empty)));
        let opaque = ConstData { dtype: DataType::FLOAT32, shape: Some(vec![2]), payload: ConstPayload::Opaque };
        assert_eq!(const_data_comment(0, &opaque), None);
        assert_eq!(
            parse_const_data_comment("# Metadata omitted. Use show_meta=True in script() method to show it."),
            None
        );
    }
}
