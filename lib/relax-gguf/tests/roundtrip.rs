//! Writing and reading back: metadata of every type, tensors of every supported type, the
//! map kept alive by `SharedBytes`, quantization error bounds and small known vectors.

mod common;

use relax_gguf::{Array, GgmlType, GgufFile, GgufWriter, Value, dequantize_to_vec, quantize};

#[test]
fn metadata_and_tensors_round_trip() {
    for alignment in [32, 64, 1] {
        let w = common::rich_writer(alignment);
        let f = GgufFile::from_bytes(common::rich_file(alignment)).unwrap();
        assert_eq!(f.version(), 3);
        assert_eq!(f.alignment(), u64::from(alignment));
        let expected: Vec<(&str, &Value)> = w.metadata().iter().collect();
        let got: Vec<(&str, &Value)> = f.metadata().iter().collect();
        assert_eq!(got, expected);
        let md = f.metadata();
        assert_eq!(md.get_str("general.name").unwrap(), "Grüße, 世界");
        assert_eq!(md.get_u64("t.u64").unwrap(), u64::MAX);
        assert_eq!(md.get_i64("t.i64").unwrap(), i64::MIN);
        assert_eq!(md.get_f64("t.f64").unwrap(), std::f64::consts::PI);
        assert!(md.get_bool("t.bool").unwrap());
        assert_eq!(md.get_str_array("a.str").unwrap().get_str(1), Some("▁hello"));
        assert_eq!(md.get_array("a.nested").unwrap().len(), 2);
        assert!(matches!(md.get_array("a.empty").unwrap(), Array::U32(v) if v.is_empty()));
        for (spec, info) in w.tensors().zip(f.tensors()) {
            assert_eq!((&spec.name, &spec.dims, spec.ggml_type), (&info.name, &info.dims, info.ggml_type));
            assert_eq!(info.offset % u64::from(alignment), 0);
            assert_eq!(info.file_offset % u64::from(alignment), 0);
        }
        for (i, t) in f.tensors().iter().enumerate() {
            let values = common::values(t.n_elements as usize, i as u32);
            let expected = dequantize_to_vec(t.ggml_type, &quantize(t.ggml_type, &values).unwrap(), values.len());
            assert_eq!(f.tensor_f32(&t.name).unwrap(), expected.unwrap(), "{}", t.name);
            if t.ggml_type == GgmlType::F32 {
                assert_eq!(f.tensor_f32(&t.name).unwrap(), values);
            }
        }
        assert_eq!(f.tensor("f32.3d").unwrap().shape(), [2, 4, 3]);
        assert_eq!(f.tensor("q6_k").unwrap().n_rows(), 4);
    }
}

#[test]
fn files_on_disk_are_mapped_and_outlive_the_reader() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("roundtrip");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rich.gguf");
    common::rich_writer(32).write_file(&path).unwrap();
    let f = GgufFile::open(&path).unwrap();
    assert_eq!(f.path(), Some(path.as_path()));
    let bytes = f.tensor_bytes("f32.1d").unwrap();
    let borrowed = f.tensor_data("f32.1d").unwrap().to_vec();
    assert_eq!(bytes.as_ptr() as usize % 32, 0);
    drop(f);
    assert!(bytes.is_mapped());
    assert_eq!(&bytes[..], &borrowed[..]);
    let values: Vec<f32> = bytes.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
    assert_eq!(values, common::values(5, 0));
    let e = GgufFile::open(dir.join("missing.gguf")).unwrap_err();
    assert!(e.to_string().contains("missing.gguf: "), "{e}");
    std::fs::write(dir.join("bad.gguf"), b"GGUF").unwrap();
    let e = GgufFile::open(dir.join("bad.gguf")).unwrap_err();
    assert!(e.to_string().contains("bad.gguf: truncated file: the version at byte 4"), "{e}");
}

#[test]
fn readers_and_byte_ranges_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<GgufFile>();
    send_sync::<relax_gguf::SharedBytes>();
    let f = GgufFile::from_bytes(common::rich_file(32)).unwrap();
    let bytes = f.tensor_bytes("q8_0").unwrap();
    let n = std::thread::spawn(move || bytes.len()).join().unwrap();
    assert_eq!(n, 3 * 2 * 34);
}

#[test]
fn writer_checks_its_input() {
    let mut w = GgufWriter::new();
    assert!(w.add_tensor_f32("x", &[100], GgmlType::Q4_K, &[0.0; 100]).is_err());
    assert!(w.add_tensor("x", &[4], GgmlType::F32, vec![0; 15]).is_err());
    w.add_tensor("x", &[4], GgmlType::F32, vec![0; 16]).unwrap();
    assert!(w.add_tensor("x", &[4], GgmlType::F32, vec![0; 16]).is_err());
    assert!(w.declare_tensor("x".repeat(64), &[4], GgmlType::F32).is_err());
    w.add("k", 1u32).unwrap();
    assert!(w.add("k", 2u32).is_err());
    assert!(w.add("general.alignment", 64u32).is_err());
    assert!(w.set_alignment(48).is_err());
    w.declare_tensor("later", &[8], GgmlType::F16).unwrap();
    let e = w.write(Vec::new()).unwrap_err();
    assert_eq!(e.to_string(), "tensor `later` was declared but given no data");
    let mut out = Vec::new();
    w.write_with(&mut out, |spec| Ok(vec![0; spec.n_bytes() as usize])).unwrap();
    assert_eq!(GgufFile::from_bytes(out).unwrap().tensors().len(), 2);
}

/// `sqrt(mean((a-b)^2)) / sqrt(mean(a^2))`.
fn relative_rms_error(a: &[f32], b: &[f32]) -> f32 {
    let e: f32 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let s: f32 = a.iter().map(|x| x * x).sum();
    (e / s).sqrt()
}

#[test]
fn quantization_error_bounds() {
    let n = 256 * 64;
    // Roughly normal weights: the sum of four uniform streams.
    let mut s = 12345u64;
    let mut u = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 40) as f32 / (1u64 << 24) as f32
    };
    let x: Vec<f32> = (0..n).map(|_| (u() + u() + u() + u() - 2.0) * 0.05).collect();
    for (ty, bound) in [
        (GgmlType::F16, 1e-3),
        (GgmlType::BF16, 5e-3),
        (GgmlType::Q8_0, 0.01),
        (GgmlType::Q6_K, 0.03),
        (GgmlType::Q4_K, 0.12),
        (GgmlType::Q4_0, 0.15),
    ] {
        let q = quantize(ty, &x).unwrap();
        assert_eq!(q.len(), n / ty.block_size() * ty.type_size());
        let y = dequantize_to_vec(ty, &q, n).unwrap();
        let err = relative_rms_error(&x, &y);
        assert!(err < bound, "{ty}: relative RMS error {err} >= {bound}");
        // Quantizing what dequantization gives back is stable after one more round.
        let again = dequantize_to_vec(ty, &quantize(ty, &y).unwrap(), n).unwrap();
        assert!(relative_rms_error(&y, &again) <= err, "{ty}");
    }
}

#[test]
fn known_small_vectors() {
    // x = -16, -15, ..., 15.
    let x: Vec<f32> = (0..32).map(|j| j as f32 - 16.0).collect();
    // Q8_0: d = 16/127 rounds to f16 0x3008 (0.1259765625); q = round(x · 127/16).
    let q = quantize(GgmlType::Q8_0, &x).unwrap();
    assert_eq!(&q[..2], &[0x08, 0x30]);
    assert_eq!(q[2] as i8, -127);
    assert_eq!(q[2 + 17] as i8, 8);
    assert_eq!(q[2 + 31] as i8, 119);
    let y = dequantize_to_vec(GgmlType::Q8_0, &q, 32).unwrap();
    assert_eq!(y[0], -127.0 * (129.0 / 1024.0));
    // Q4_0: the largest magnitude is -16, so d = -16 / -8 = 2 (f16 0x4000) and
    // q = min(15, trunc(x/2 + 8.5)); byte j holds q[j] | q[j + 16] << 4.
    let q = quantize(GgmlType::Q4_0, &x).unwrap();
    assert_eq!(&q[..2], &[0x00, 0x40]);
    assert_eq!(q[2], 0x80);
    assert_eq!(q[2 + 15], 0xf8);
    let y = dequantize_to_vec(GgmlType::Q4_0, &q, 32).unwrap();
    assert_eq!((y[0], y[16], y[31]), (-16.0, 0.0, 14.0));
    // All-zero super-blocks quantize to all-zero bytes.
    for ty in [GgmlType::Q4_K, GgmlType::Q6_K] {
        let q = quantize(ty, &[0.0; 256]).unwrap();
        assert!(q.iter().all(|&b| b == 0), "{ty}");
        assert_eq!(dequantize_to_vec(ty, &q, 256).unwrap(), vec![0.0; 256]);
    }
    // BF16 and F16 keep values they can represent.
    for ty in [GgmlType::F16, GgmlType::BF16] {
        let v = [1.0, -2.5, 0.0, -0.0, 0.125, 384.0];
        let y = dequantize_to_vec(ty, &quantize(ty, &v).unwrap(), v.len()).unwrap();
        assert_eq!(y, v, "{ty}");
    }
}
