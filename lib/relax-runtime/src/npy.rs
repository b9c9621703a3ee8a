//! `.npy` files, read and written with the `npyz` crate.
//!
//! Element types: `<f2`, `<f4`, `<f8`, `|i1`, `<i2`, `<i4`, `<i8`, `|u1`, `<u2`, `<u4`,
//! `<u8`, `|b1` map to the dtypes of the same name; `<V2` (what numpy writes for
//! `ml_dtypes.bfloat16`) is `bfloat16`. Big-endian files are byte-swapped; Fortran order
//! is read as such. Data is read and written as raw little-endian bytes.

use std::io::Read;

use npyz::{DType, TypeChar, WriterBuilder};
use relax_ir::{DataType, TypeCode};

use crate::error::{RunError, RunResult};
use crate::value::{Tensor, numel, row_major_strides};

/// The dtype of an `.npy` element type.
fn dtype_of(ts: &npyz::TypeStr) -> Option<DataType> {
    let size = ts.size_field();
    Some(match (ts.type_char(), size) {
        (TypeChar::Float, 2) => DataType::FLOAT16,
        (TypeChar::Float, 4) => DataType::FLOAT32,
        (TypeChar::Float, 8) => DataType::FLOAT64,
        (TypeChar::Int, b @ (1 | 2 | 4 | 8)) => DataType::new(TypeCode::Int, (b * 8) as u16),
        (TypeChar::Uint, b @ (1 | 2 | 4 | 8)) => DataType::new(TypeCode::UInt, (b * 8) as u16),
        (TypeChar::Bool, 1) => DataType::BOOL,
        (TypeChar::RawData, 2) => DataType::BFLOAT16,
        _ => return None,
    })
}

/// The `.npy` type string of a dtype.
fn type_str(dt: DataType) -> Option<&'static str> {
    Some(match (dt.code, dt.bits) {
        (TypeCode::Float, 16) => "<f2",
        (TypeCode::Float, 32) => "<f4",
        (TypeCode::Float, 64) => "<f8",
        (TypeCode::BFloat, 16) => "<V2",
        (TypeCode::Int, 8) => "|i1",
        (TypeCode::Int, 16) => "<i2",
        (TypeCode::Int, 32) => "<i4",
        (TypeCode::Int, 64) => "<i8",
        (TypeCode::UInt, 8) => "|u1",
        (TypeCode::UInt, 16) => "<u2",
        (TypeCode::UInt, 32) => "<u4",
        (TypeCode::UInt, 64) => "<u8",
        (TypeCode::Bool, _) => "|b1",
        _ => return None,
    })
}

/// Reads a tensor from `.npy` bytes.
pub fn read(bytes: &[u8]) -> RunResult<Tensor> {
    let file = npyz::NpyFile::new(bytes).map_err(|e| RunError::new(format!("not a valid .npy file: {e}")))?;
    let DType::Plain(ts) = file.dtype() else {
        return Err(RunError::new("structured .npy arrays are not supported"));
    };
    let dt = dtype_of(&ts).ok_or_else(|| RunError::new(format!("the .npy element type `{ts}` is not supported")))?;
    let shape: Vec<i64> = file.shape().iter().map(|&d| d as i64).collect();
    let fortran = file.order() == npyz::Order::Fortran;
    let big = ts.endianness() == npyz::Endianness::Big;
    let mut raw = Vec::new();
    file.into_inner().read_to_end(&mut raw).map_err(|e| RunError::new(format!("cannot read the .npy data: {e}")))?;
    let w = dt.bytes() as usize;
    let n = numel(&shape);
    if raw.len() < n * w {
        return Err(RunError::new(format!(
            "the .npy file holds {} bytes of data, its shape needs {}",
            raw.len(),
            n * w
        )));
    }
    raw.truncate(n * w);
    if big && w > 1 {
        for c in raw.chunks_mut(w) {
            c.reverse();
        }
    }
    if fortran && shape.len() > 1 {
        // Element (i0, i1, ...) is at sum(i_k * fortran_stride_k).
        let mut fst = vec![1i64; shape.len()];
        for k in 1..shape.len() {
            fst[k] = fst[k - 1] * shape[k - 1];
        }
        let cst = row_major_strides(&shape);
        let mut out = vec![0u8; raw.len()];
        for flat in 0..n {
            let mut off = 0i64;
            for k in 0..shape.len() {
                off += (flat as i64 / cst[k]) % shape[k].max(1) * fst[k];
            }
            let o = off as usize * w;
            out[flat * w..(flat + 1) * w].copy_from_slice(&raw[o..o + w]);
        }
        raw = out;
    }
    let t = Tensor::zeros(&shape, dt);
    t.data.borrow_mut().copy_from_slice(&raw);
    Ok(t)
}

/// Reads a tensor from a `.npy` file.
pub fn read_file(path: &std::path::Path) -> RunResult<Tensor> {
    let bytes = std::fs::read(path).map_err(|e| RunError::new(format!("cannot read `{}`: {e}", path.display())))?;
    read(&bytes).map_err(|e| RunError::new(format!("`{}`: {}", path.display(), e.message)))
}

/// Writes a tensor as `.npy` bytes.
pub fn write(t: &Tensor) -> RunResult<Vec<u8>> {
    let ts: npyz::TypeStr = type_str(t.dtype)
        .ok_or_else(|| RunError::new(format!("tensors of dtype {} cannot be written as .npy", t.dtype)))?
        .parse()
        .map_err(|e| RunError::new(format!("{e}")))?;
    let shape: Vec<u64> = t.shape.iter().map(|&d| d.max(0) as u64).collect();
    let mut out = Vec::new();
    npyz::WriteOptions::new_header_only()
        .dtype(DType::Plain(ts))
        .shape(&shape)
        .writer(&mut out)
        .write_header_only()
        .map_err(|e| RunError::new(format!("cannot write .npy: {e}")))?;
    out.extend_from_slice(&t.bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::Scalar;

    #[test]
    fn round_trips_every_dtype() {
        for dt in [
            DataType::FLOAT32,
            DataType::FLOAT16,
            DataType::BFLOAT16,
            DataType::FLOAT64,
            DataType::INT8,
            DataType::INT32,
            DataType::INT64,
            DataType::UINT8,
            DataType::BOOL,
        ] {
            let t = Tensor::from_scalars(&[2, 3], dt, (0..6).map(|i| Scalar::float(dt, i as f64 - 2.0)));
            let back = read(&write(&t).unwrap()).unwrap();
            assert_eq!(back.dtype, dt);
            assert_eq!(back.shape, vec![2, 3]);
            assert_eq!(back.bytes(), t.bytes(), "{dt}");
        }
    }
}
