//! Literal spellings shared by the Relax and TIR printers: floats, integers, strings,
//! attribute values and inline Relax scalar constants.
//!
//! Checked against TVM 0.25's printer:
//! * a finite float whose value is integral prints in fixed notation with one decimal
//!   (`%.1f`), e.g. `256.0`, `-0.0`, or the full 309-digit expansion of `1e300`;
//! * any other finite float prints as `%.17g` (`0.10000000000000001`, `1e-300`,
//!   `1.0000000000000001e-05`);
//! * infinities and NaN print quoted: `T.float32("inf")`, `R.const("nan", "float32")`;
//! * strings escape `\\`, `"`, `\n`, `\t`, `\r` and every other byte outside `0x20..0x7f`
//!   as `\xHH` with uppercase hex, byte by byte (so `é` prints `\xC3\xA9`).

use std::fmt::Write as _;

use crate::attrs::AttrValue;
use crate::dtype::{DataType, TypeCode};
use crate::entities::Buffer;
use crate::module::{ConstData, ConstPayload};

/// The number spelling of a finite double (no quotes, no wrapper).
pub fn float_number(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 { format!("{v:.1}") } else { fmt_g17(v) }
}

/// The literal of a double as TVM writes it inside `T.float32(...)` or `R.const(...)`:
/// a number, or a quoted `"inf"`, `"-inf"`, `"nan"`.
pub fn float_literal(v: f64) -> String {
    if v.is_nan() {
        if v.is_sign_negative() { "\"-nan\"".to_string() } else { "\"nan\"".to_string() }
    } else if v.is_infinite() {
        if v < 0.0 { "\"-inf\"".to_string() } else { "\"inf\"".to_string() }
    } else {
        float_number(v)
    }
}

/// C's `%.17g` for a finite double.
fn fmt_g17(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let e = format!("{v:.16e}");
    let Some((mant, exp)) = e.split_once('e') else { return e };
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..17).contains(&exp) {
        let mant = strip_fraction_zeros(mant);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.unsigned_abs())
    } else {
        let prec = usize::try_from(16 - exp).unwrap_or(0);
        strip_fraction_zeros(&format!("{v:.prec$}")).to_string()
    }
}

fn strip_fraction_zeros(s: &str) -> &str {
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.') } else { s }
}

/// A quoted, escaped string literal.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_quoted(&mut out, s);
    out
}

/// Appends a quoted, escaped string literal to `out`.
pub fn write_quoted(out: &mut String, s: &str) {
    out.push('"');
    for &b in s.as_bytes() {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => {
                let _ = write!(out, "\\x{b:02X}");
            }
        }
    }
    out.push('"');
}

/// The TIR spelling of an integer constant: bare for `int32`, `T.bool(True)` for bool,
/// `T.int64(4)` (etc.) otherwise.
pub fn tir_int(dtype: DataType, v: i64) -> String {
    if dtype == DataType::INT32 {
        v.to_string()
    } else if dtype.is_bool() {
        format!("T.bool({})", if v != 0 { "True" } else { "False" })
    } else if dtype.is_uint() && dtype.bits == 64 {
        format!("T.{dtype}({})", v as u64)
    } else {
        format!("T.{dtype}({v})")
    }
}

/// The Relax spelling of an integer constant (inside shapes, `R.prim_value`, attributes):
/// always bare, `True`/`False` for bool.
pub fn relax_int(dtype: DataType, v: i64) -> String {
    if dtype.is_bool() {
        py_bool(v != 0).to_string()
    } else if dtype.is_uint() && dtype.bits == 64 {
        (v as u64).to_string()
    } else {
        v.to_string()
    }
}

/// `T.float32(1.0)`.
pub fn tir_float(dtype: DataType, v: f64) -> String {
    format!("T.{dtype}({})", float_literal(v))
}

/// `True` / `False`.
pub fn py_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

/// Where an attribute value is printed: Relax functions print typed integers bare, TIR
/// (and module level) prints them as TIR literals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrCtx {
    /// Inside a Relax function (`R.func_attr`, op keywords).
    Relax,
    /// Inside a PrimFunc or at module level.
    Tir,
}

/// Appends an attribute value. Dict keys print sorted, as TVM prints maps.
pub fn write_attr(out: &mut String, v: &AttrValue, ctx: AttrCtx) {
    // Iterative over nesting depth would be overkill: attribute values are shallow; cap it
    // above what the reader accepts (its nesting limit is 200), so that text always prints
    // back whole.
    write_attr_depth(out, v, ctx, 0, &mut unnamed_buffer);
}

/// Like [`write_attr`], printing the buffers a value names with `buffer` (the TIR
/// printer passes its namer: `{"layout_free_placeholders": [T_reshape_1]}`).
pub fn write_attr_with(out: &mut String, v: &AttrValue, ctx: AttrCtx, buffer: &mut dyn FnMut(&mut String, Buffer)) {
    write_attr_depth(out, v, ctx, 0, buffer);
}

/// A buffer printed without a PrimFunc to name it (outside block annotations).
fn unnamed_buffer(out: &mut String, b: Buffer) {
    let _ = write!(out, "<{b:?}>");
}

type BufferNames<'a> = &'a mut dyn FnMut(&mut String, Buffer);

fn write_attr_depth(out: &mut String, v: &AttrValue, ctx: AttrCtx, depth: u32, names: BufferNames<'_>) {
    if depth > 256 {
        out.push_str("...");
        return;
    }
    match v {
        AttrValue::None => out.push_str("None"),
        AttrValue::Bool(b) => out.push_str(py_bool(*b)),
        AttrValue::Int(i) => {
            let _ = write!(out, "{i}");
        }
        AttrValue::Float(f) => out.push_str(&float_literal(f.get())),
        AttrValue::Str(s) => write_quoted(out, s),
        AttrValue::PrimInt(t, i) => match ctx {
            AttrCtx::Relax => out.push_str(&relax_int(*t, *i)),
            AttrCtx::Tir => out.push_str(&tir_int(*t, *i)),
        },
        AttrValue::PrimFloat(t, f) => out.push_str(&tir_float(*t, f.get())),
        AttrValue::List(items) => {
            out.push('[');
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_attr_depth(out, it, ctx, depth + 1, names);
            }
            out.push(']');
        }
        AttrValue::Dict(entries) => {
            let mut sorted: Vec<&(String, AttrValue)> = entries.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            write_dict_with(out, sorted.into_iter().map(|(k, v)| (k.as_str(), v)), ctx, depth, names);
        }
        AttrValue::Target(inner) => {
            out.push_str("T.target(");
            write_attr_depth(out, inner, ctx, depth + 1, names);
            out.push(')');
        }
        AttrValue::Text(t) => out.push_str(t),
        AttrValue::Buffer(b) => names(out, *b),
    }
}

/// Appends `{"k": v, ...}` for entries already in printing order.
pub fn write_dict<'v>(
    out: &mut String,
    entries: impl Iterator<Item = (&'v str, &'v AttrValue)>,
    ctx: AttrCtx,
    depth: u32,
) {
    write_dict_with(out, entries, ctx, depth, &mut unnamed_buffer);
}

fn write_dict_with<'v>(
    out: &mut String,
    entries: impl Iterator<Item = (&'v str, &'v AttrValue)>,
    ctx: AttrCtx,
    depth: u32,
    names: BufferNames<'_>,
) {
    out.push('{');
    for (i, (k, v)) in entries.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_quoted(out, k);
        out.push_str(": ");
        write_attr_depth(out, v, ctx, depth + 1, names);
    }
    out.push('}');
}

/// Decodes an IEEE half-precision value.
pub fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let mant = f64::from(h & 0x3ff);
    match exp {
        0 => sign * mant * 2f64.powi(-24),
        31 => {
            if mant == 0.0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            }
        }
        _ => sign * (1.0 + mant / 1024.0) * 2f64.powi(exp - 15),
    }
}

/// The value text of an inline scalar constant (`1.0`, `-3`, `True`, `"inf"`), or `None`
/// when the constant is not an inline scalar or its bytes do not match its dtype.
pub fn inline_scalar_value(c: &ConstData) -> Option<String> {
    if !c.is_inline_scalar() {
        return None;
    }
    let ConstPayload::Data(bytes) = &c.payload else { return None };
    let t = c.dtype;
    let want = usize::try_from(t.bytes()).ok()?;
    if bytes.len() != want {
        return None;
    }
    let mut raw = [0u8; 8];
    raw[..want].copy_from_slice(bytes);
    let u = u64::from_le_bytes(raw);
    Some(match t.code {
        TypeCode::Bool => py_bool(u != 0).to_string(),
        TypeCode::Int => {
            let shift = 64 - u32::from(t.bits);
            (((u << shift) as i64) >> shift).to_string()
        }
        TypeCode::Float => {
            let v = match t.bits {
                16 => f16_to_f64(u as u16),
                32 => f64::from(f32::from_bits(u as u32)),
                _ => f64::from_bits(u),
            };
            float_literal(v)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_like_tvm() {
        assert_eq!(float_number(0.1), "0.10000000000000001");
        assert_eq!(float_number(1e-5), "1.0000000000000001e-05");
        assert_eq!(float_number(1e-300), "1e-300");
        assert_eq!(float_number(2.5), "2.5");
        assert_eq!(float_number(1.0), "1.0");
        assert_eq!(float_number(-0.0), "-0.0");
        assert_eq!(float_number(1e16), "10000000000000000.0");
        assert_eq!(float_number(1e23), "99999999999999991611392.0");
        assert_eq!(float_number(f64::from(f32::MAX)), "340282346638528859811704183484516925440.0");
        assert_eq!(float_number(5e-324), "4.9406564584124654e-324");
        assert_eq!(float_number(f64::from(0.1f32)), "0.10000000149011612");
        assert_eq!(float_number(123456789.5), "123456789.5");
        assert_eq!(float_number(1.5e-7), "1.4999999999999999e-07");
        assert_eq!(float_literal(f64::INFINITY), "\"inf\"");
        assert_eq!(float_literal(f64::NEG_INFINITY), "\"-inf\"");
        assert_eq!(float_literal(f64::NAN), "\"nan\"");
        assert!(float_number(1e300).starts_with("1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160.0"));
    }

    #[test]
    fn strings_escape_bytes() {
        assert_eq!(quote("a'b"), "\"a'b\"");
        assert_eq!(quote("q\"q\\"), "\"q\\\"q\\\\\"");
        assert_eq!(quote("\n\t\r\u{0}\u{1f}\u{7f}"), "\"\\n\\t\\r\\x00\\x1F\\x7F\"");
        assert_eq!(quote("é"), "\"\\xC3\\xA9\"");
    }

    #[test]
    fn half_decoding() {
        assert_eq!(f16_to_f64(0x3c00), 1.0);
        assert_eq!(f16_to_f64(0x8000), -0.0);
        assert!(f16_to_f64(0x8000).is_sign_negative());
        assert_eq!(f16_to_f64(0x7bff), 65504.0);
        assert_eq!(f16_to_f64(0x0001), 2f64.powi(-24));
        assert!(f16_to_f64(0x7e00).is_nan());
    }
}
