//! Every validation rule of the reader on hand-made files: each malformed input is an error
//! of the right kind whose message names the key, tensor or byte offset.

use relax_gguf::{ErrorKind, GgufFile};

/// A GGUF file written byte by byte, so tests can break any rule.
#[derive(Clone)]
struct Raw(Vec<u8>);

impl Raw {
    fn header(version: u32, n_tensors: u64, n_kv: u64) -> Raw {
        let mut r = Raw(b"GGUF".to_vec());
        r.u32(version).u64(n_tensors).u64(n_kv);
        r
    }
    fn u32(&mut self, v: u32) -> &mut Raw {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Raw {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn str(&mut self, s: &str) -> &mut Raw {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    fn kv_u32(&mut self, key: &str, v: u32) -> &mut Raw {
        self.str(key).u32(4).u32(v)
    }
    fn tensor(&mut self, name: &str, dims: &[u64], ty: u32, offset: u64) -> &mut Raw {
        self.str(name).u32(dims.len() as u32);
        for &d in dims {
            self.u64(d);
        }
        self.u32(ty).u64(offset)
    }
    fn pad(&mut self, to: usize) -> &mut Raw {
        while self.0.len() % to != 0 {
            self.0.push(0);
        }
        self
    }
    fn zeros(&mut self, n: usize) -> &mut Raw {
        self.0.resize(self.0.len() + n, 0);
        self
    }
    fn open(&self) -> Result<GgufFile, relax_gguf::GgufError> {
        GgufFile::from_bytes(self.0.clone())
    }
}

fn err(r: &Raw) -> (ErrorKind, String) {
    let e = r.open().expect_err("the file should be rejected");
    (e.kind(), e.to_string())
}

/// One F32 tensor `w` of 8 elements at offset 0.
fn one_tensor() -> Raw {
    let mut r = Raw::header(3, 1, 1);
    r.kv_u32("k", 1).tensor("w", &[8], 0, 0).pad(32).zeros(32);
    r
}

#[test]
fn a_valid_file_opens() {
    let f = one_tensor().open().unwrap();
    assert_eq!(f.version(), 3);
    assert_eq!(f.data_offset() % 32, 0);
    assert_eq!(f.tensor("w").unwrap().n_bytes, 32);
    assert_eq!(f.tensor_f32("w").unwrap(), vec![0.0; 8]);
    let e = f.tensor("v").unwrap_err();
    assert_eq!((e.kind(), e.to_string()), (ErrorKind::MissingTensor, "no tensor named `v`".to_string()));
}

#[test]
fn header_errors() {
    let (k, m) = err(&Raw(b"GGML\x03\0\0\0".to_vec()));
    assert_eq!(k, ErrorKind::Malformed);
    assert!(m.starts_with("not a GGUF file: it starts with [47, 47, 4d, 4c]"), "{m}");
    let (k, m) = err(&Raw(b"GG".to_vec()));
    assert_eq!(k, ErrorKind::Truncated);
    assert_eq!(m, "truncated file: the magic `GGUF` at byte 0 needs 4 bytes, but the file ends at byte 2");
    let (k, m) = err(&Raw::header(4, 0, 0));
    assert_eq!(
        (k, m.as_str()),
        (ErrorKind::UnsupportedVersion, "unsupported GGUF version 4 (relax reads versions 1, 2 and 3)")
    );
    let (k, _) = err(&Raw::header(0, 0, 0));
    assert_eq!(k, ErrorKind::UnsupportedVersion);
    let (_, m) = err(&Raw::header(3u32.swap_bytes(), 0, 0));
    assert_eq!(m, "big-endian GGUF file (version 3); relax reads little-endian files only");
    let (k, m) = err(&Raw::header(3, 0, u64::MAX));
    assert_eq!(k, ErrorKind::Truncated);
    assert!(m.contains("the header's metadata count claims 18446744073709551615 entries"), "{m}");
    let (_, m) = err(&Raw::header(3, u64::MAX, 0));
    assert!(m.contains("the header's tensor count claims"), "{m}");
    // Empty files, and files that stop in the counts.
    assert_eq!(err(&Raw(Vec::new())).0, ErrorKind::Truncated);
    assert_eq!(err(&Raw(b"GGUF\x03\0\0\0\x01".to_vec())).0, ErrorKind::Truncated);
}

#[test]
fn version_1_and_2_files_open() {
    // Version 1: counts, lengths and dims are u32.
    let mut r = Raw(b"GGUF".to_vec());
    r.u32(1).u32(1).u32(1);
    r.u32(1).0.extend_from_slice(b"k");
    r.u32(4).u32(7);
    r.u32(1).0.extend_from_slice(b"w");
    r.u32(1).u32(4).u32(0).u64(0).pad(32).zeros(16);
    let f = r.open().unwrap();
    assert_eq!((f.version(), f.metadata().get_u32("k").unwrap()), (1, 7));
    assert_eq!(f.tensor("w").unwrap().dims, [4]);
    let mut r = one_tensor();
    r.0[4] = 2;
    assert_eq!(r.open().unwrap().version(), 2);
}

#[test]
fn metadata_errors() {
    let mut r = Raw::header(3, 0, 1);
    r.str("k").u32(13).u32(0);
    assert_eq!(err(&r).1, "metadata key `k` has unknown value type 13 at byte 33");
    let mut r = Raw::header(3, 0, 2);
    r.kv_u32("k", 1).kv_u32("k", 2);
    assert_eq!(err(&r), (ErrorKind::Malformed, "duplicate metadata key `k` at byte 41".into()));
    let mut r = Raw::header(3, 0, 1);
    r.str("name").u32(8).u64(u64::MAX - 1);
    let (k, m) = err(&r);
    assert_eq!(k, ErrorKind::Truncated);
    assert_eq!(
        m,
        "truncated file: the value of `name` at byte 40 claims 18446744073709551614 bytes, but only 0 remain"
    );
    let mut r = Raw::header(3, 0, 1);
    r.str("arr").u32(9).u32(8).u64(1 << 40);
    let (k, m) = err(&r);
    assert_eq!(k, ErrorKind::Truncated);
    assert!(m.starts_with("truncated file: the array `arr` of STRING claims 1099511627776 entries"), "{m}");
    let mut r = Raw::header(3, 0, 1);
    r.str("b").u32(7).0.push(2);
    assert_eq!(err(&r).1, "metadata key `b` has bool byte 2 at byte 37, expected 0 or 1");
    let mut r = Raw::header(3, 0, 1);
    r.u64(2).0.extend_from_slice(&[0xff, 0xfe]);
    r.u32(4).u32(0);
    assert_eq!(err(&r).1, "metadata entry 0 at byte 24: the key is not valid UTF-8");
    // Arrays nested 17 deep.
    let mut r = Raw::header(3, 0, 1);
    r.str("deep").u32(9);
    for _ in 0..17 {
        r.u32(9).u64(1);
    }
    r.u32(4).u64(0);
    assert!(err(&r).1.starts_with("metadata key `deep` nests arrays more than 16 deep"));
}

#[test]
fn alignment_rules() {
    let mut r = Raw::header(3, 0, 1);
    r.kv_u32("general.alignment", 24);
    assert_eq!(err(&r).1, "`general.alignment` is 24, which is not a power of two");
    let mut r = Raw::header(3, 0, 1);
    r.str("general.alignment").u32(10).u64(32);
    assert_eq!(err(&r).1, "`general.alignment` is a UINT64, expected a UINT32");
    let mut r = Raw::header(3, 1, 1);
    r.kv_u32("general.alignment", 64).tensor("w", &[8], 0, 0).pad(64).zeros(32);
    let f = r.open().unwrap();
    assert_eq!((f.alignment(), f.data_offset() % 64), (64, 0));
    let mut r = Raw::header(3, 1, 0);
    r.tensor("w", &[4], 0, 16).pad(32).zeros(64);
    assert_eq!(err(&r).1, "tensor `w` has data offset 16, which is not a multiple of the alignment 32");
}

#[test]
fn tensor_info_errors() {
    let mut r = Raw::header(3, 1, 0);
    r.tensor("w", &[256], 99, 0).pad(32).zeros(1024);
    assert_eq!(err(&r), (ErrorKind::UnknownType, "tensor `w` has unknown ggml type id 99 (byte 45)".into()));
    let mut r = Raw::header(3, 1, 0);
    r.tensor("w", &[32], 31, 0).pad(32).zeros(1024);
    assert_eq!(err(&r).1, "tensor `w` has type id 31 (Q4_0_4_4), which ggml has removed (byte 45)");
    let mut r = Raw::header(3, 1, 0);
    r.tensor("w", &[100], 12, 0).pad(32).zeros(1024);
    assert_eq!(err(&r).1, "tensor `w` has 100 elements per row, not a multiple of Q4_K's block size 256");
    let mut r = Raw::header(3, 1, 0);
    r.tensor("w", &[1, 1, 1, 1, 1], 0, 0);
    assert_eq!(err(&r).1, "tensor `w` has 5 dimensions; GGUF allows at most 4");
    let mut r = Raw::header(3, 1, 0);
    r.tensor("w", &[1 << 32, 1 << 32], 0, 0);
    assert!(err(&r).1.starts_with("tensor `w` has more than 2^63 - 1 elements"));
    let mut r = Raw::header(3, 1, 0);
    r.tensor("w", &[u64::MAX], 0, 0);
    assert_eq!(err(&r).1, "tensor `w` has dimension 0 of size 18446744073709551615, more than 2^63 - 1");
    let mut r = Raw::header(3, 1, 0);
    r.tensor(&"x".repeat(65), &[1], 0, 0);
    assert!(err(&r).1.ends_with("is 65 bytes long; GGUF allows at most 64"));
    let mut r = Raw::header(3, 2, 0);
    r.tensor("w", &[8], 0, 0).tensor("w", &[8], 0, 32).pad(32).zeros(64);
    assert_eq!(err(&r), (ErrorKind::Malformed, "duplicate tensor name `w` (tensor info 1)".into()));
}

#[test]
fn tensor_data_must_lie_in_the_file_without_overlap() {
    let mut r = Raw::header(3, 1, 0);
    r.tensor("w", &[8], 0, 0).pad(32).zeros(31);
    let (k, m) = err(&r);
    assert_eq!(k, ErrorKind::Truncated);
    assert_eq!(m, "tensor `w` (32 bytes at data offset 0, file byte 64) runs past the end of the file (95 bytes)");
    let mut r = Raw::header(3, 1, 0);
    r.tensor("w", &[8], 0, u64::MAX - 31).pad(32).zeros(32);
    assert!(err(&r).1.contains("runs past the end of the file"));
    let mut r = Raw::header(3, 2, 0);
    r.tensor("a", &[16], 0, 0).tensor("b", &[8], 0, 32).pad(32).zeros(128);
    assert_eq!(err(&r).1, "the data of tensors `a` (bytes 0..64) and `b` (from byte 32) overlap");
    // The data section may end without padding after the last tensor.
    let mut r = Raw::header(3, 1, 0);
    r.tensor("w", &[3], 0, 0).pad(32).zeros(12);
    assert!(r.open().is_ok());
}

#[test]
fn unsupported_types_are_named() {
    let mut r = Raw::header(3, 1, 0);
    r.tensor("blk.0.ffn_down.weight", &[256], 13, 0).pad(32).zeros(176);
    let f = r.open().unwrap();
    let e = f.tensor_f32("blk.0.ffn_down.weight").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnsupportedType);
    assert_eq!(
        e.to_string(),
        "tensor `blk.0.ffn_down.weight` has type Q5_K, which relax does not support \
         (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K)"
    );
    assert_eq!(f.tensor_data("blk.0.ffn_down.weight").unwrap().len(), 176);
}
