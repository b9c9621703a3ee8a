//! Encoding of the attributes of op calls run by reference kernels: key, then a tagged
//! value (none, bool, int, float, string, typed int, typed float, list, dict, target,
//! text), nesting at most 64 deep.

use relax_ir::{AttrValue, Attrs, FloatBits};

use super::wire::{Reader, Writer};
use crate::error::RunResult;

/// Why attributes cannot be encoded, if they cannot.
pub(crate) fn check_attr(a: &AttrValue) -> Result<(), String> {
    match a {
        AttrValue::Buffer(_) => Err("a buffer attribute".to_string()),
        AttrValue::List(v) => v.iter().try_for_each(check_attr),
        AttrValue::Dict(v) => v.iter().try_for_each(|(_, x)| check_attr(x)),
        AttrValue::Target(x) => check_attr(x),
        _ => Ok(()),
    }
}

pub(crate) fn write_attrs(w: &mut Writer, a: &Attrs) {
    w.len(a.0.len());
    for (k, v) in &a.0 {
        w.str(k);
        write_attr(w, v);
    }
}

fn write_attr(w: &mut Writer, a: &AttrValue) {
    match a {
        AttrValue::None => w.u8(0),
        AttrValue::Bool(b) => {
            w.u8(1);
            w.bool(*b);
        }
        AttrValue::Int(x) => {
            w.u8(2);
            w.i64(*x);
        }
        AttrValue::Float(x) => {
            w.u8(3);
            w.u64(x.0);
        }
        AttrValue::Str(s) => {
            w.u8(4);
            w.str(s);
        }
        AttrValue::PrimInt(dt, x) => {
            w.u8(5);
            w.dtype(*dt);
            w.i64(*x);
        }
        AttrValue::PrimFloat(dt, x) => {
            w.u8(6);
            w.dtype(*dt);
            w.u64(x.0);
        }
        AttrValue::List(v) => {
            w.u8(7);
            w.len(v.len());
            v.iter().for_each(|x| write_attr(w, x));
        }
        AttrValue::Dict(v) => {
            w.u8(8);
            w.len(v.len());
            for (k, x) in v {
                w.str(k);
                write_attr(w, x);
            }
        }
        AttrValue::Target(x) => {
            w.u8(9);
            write_attr(w, x);
        }
        AttrValue::Text(s) => {
            w.u8(10);
            w.str(s);
        }
        // Rejected by `check_attr` before encoding.
        AttrValue::Buffer(_) => w.u8(255),
    }
}

pub(crate) fn read_attrs(r: &mut Reader<'_>) -> RunResult<Attrs> {
    let n = r.len(5)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let k = r.str()?;
        v.push((k, read_attr(r, 0)?));
    }
    Ok(Attrs(v))
}

/// The deepest attribute nesting read.
const MAX_ATTR_DEPTH: usize = 64;

fn read_attr(r: &mut Reader<'_>, depth: usize) -> RunResult<AttrValue> {
    if depth > MAX_ATTR_DEPTH {
        return Err(r.err("attributes nest too deeply"));
    }
    Ok(match r.u8()? {
        0 => AttrValue::None,
        1 => AttrValue::Bool(r.bool()?),
        2 => AttrValue::Int(r.i64()?),
        3 => AttrValue::Float(FloatBits(r.u64()?)),
        4 => AttrValue::Str(r.str()?),
        5 => AttrValue::PrimInt(r.dtype()?, r.i64()?),
        6 => AttrValue::PrimFloat(r.dtype()?, FloatBits(r.u64()?)),
        7 => {
            let n = r.len(1)?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(read_attr(r, depth + 1)?);
            }
            AttrValue::List(v)
        }
        8 => {
            let n = r.len(5)?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                let k = r.str()?;
                v.push((k, read_attr(r, depth + 1)?));
            }
            AttrValue::Dict(v)
        }
        9 => AttrValue::Target(Box::new(read_attr(r, depth + 1)?)),
        10 => AttrValue::Text(r.str()?),
        t => return Err(r.err(format!("bad attribute tag {t}"))),
    })
}
