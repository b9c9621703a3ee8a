//! Files the integration tests share: one with metadata of every value type and tensors of
//! every supported type and rank.

#![allow(dead_code, reason = "each test binary uses some of the helpers")]

use relax_gguf::{Array, GgmlType, GgufWriter, StrArray, Value};

/// `n` values of a smooth, signed, non-repeating pattern.
pub fn values(n: usize, salt: u32) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as f32 * 0.37 + salt as f32).sin() * 0.5 + (i % 7) as f32 * 0.01) * (1.0 + salt as f32))
        .collect()
}

/// Metadata of every value type, including nested arrays, empty arrays and text that is not
/// ASCII, and one tensor of each supported type plus tensors of rank 1 to 4.
pub fn rich_writer(alignment: u32) -> GgufWriter {
    let mut w = GgufWriter::new();
    w.set_alignment(alignment).unwrap();
    let kv: Vec<(&str, Value)> = vec![
        ("general.architecture", "llama".into()),
        ("general.name", "Grüße, 世界".into()),
        ("t.u8", 200u8.into()),
        ("t.i8", (-100i8).into()),
        ("t.u16", 60000u16.into()),
        ("t.i16", (-30000i16).into()),
        ("t.u32", 4_000_000_000u32.into()),
        ("t.i32", (-2_000_000_000i32).into()),
        ("t.f32", 0.1f32.into()),
        ("t.bool", true.into()),
        ("t.u64", u64::MAX.into()),
        ("t.i64", i64::MIN.into()),
        ("t.f64", std::f64::consts::PI.into()),
        ("t.empty_string", "".into()),
        ("a.u8", Array::U8(vec![1, 2, 255]).into()),
        ("a.i8", Array::I8(vec![-1, 0, 127]).into()),
        ("a.u16", Array::U16(vec![1, 65535]).into()),
        ("a.i16", Array::I16(vec![-32768, 5]).into()),
        ("a.u32", Array::U32(vec![7, 8, 9]).into()),
        ("a.i32", Array::I32(vec![-7, 8]).into()),
        ("a.f32", Array::F32(vec![1.5, -0.25, 3e-8]).into()),
        ("a.bool", Array::Bool(vec![true, false, true]).into()),
        ("a.u64", Array::U64(vec![u64::MAX, 0]).into()),
        ("a.i64", Array::I64(vec![i64::MIN, 1]).into()),
        ("a.f64", Array::F64(vec![1e300, -2.5]).into()),
        ("a.str", Array::String(["", "▁hello", "<0x0A>", "Ġworld"].into_iter().collect::<StrArray>()).into()),
        ("a.empty", Array::U32(vec![]).into()),
        (
            "a.nested",
            Array::Array(vec![
                Array::String(["a", "bc"].into_iter().collect()),
                Array::String(["d"].into_iter().collect()),
            ])
            .into(),
        ),
    ];
    for (k, v) in kv {
        w.add(k, v).unwrap();
    }
    let tensors: [(&str, &[u64], GgmlType); 10] = [
        ("f32.1d", &[5], GgmlType::F32),
        ("f32.3d", &[3, 4, 2], GgmlType::F32),
        ("f16.4d", &[2, 3, 2, 2], GgmlType::F16),
        ("bf16.2d", &[7, 3], GgmlType::BF16),
        ("q8_0", &[64, 3], GgmlType::Q8_0),
        ("q4_0", &[96, 2], GgmlType::Q4_0),
        ("q4_k", &[512, 3], GgmlType::Q4_K),
        ("q6_k", &[256, 2, 2], GgmlType::Q6_K),
        ("blk.0.attn_q.weight", &[256, 4], GgmlType::Q4_K),
        ("blk.0.attn_norm.weight", &[256], GgmlType::F32),
    ];
    for (i, (name, dims, ty)) in tensors.into_iter().enumerate() {
        let n: u64 = dims.iter().product();
        w.add_tensor_f32(name, dims, ty, &values(n as usize, i as u32)).unwrap();
    }
    w
}

/// [`rich_writer`]'s file.
pub fn rich_file(alignment: u32) -> Vec<u8> {
    let mut out = Vec::new();
    rich_writer(alignment).write(&mut out).unwrap();
    out
}
