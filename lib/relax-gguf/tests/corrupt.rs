//! Truncated and corrupted files never panic: valid files are cut at every byte and have
//! every byte of their header overwritten with several patterns (and random bytes of their
//! data section), and each result either opens, with every tensor readable, or is an error.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use relax_gguf::generate::write_model;
use relax_gguf::{FileType, GgufFile, ModelConfig};

/// Opens `bytes` and, when that works, reads every metadata entry and every tensor.
fn exercise(bytes: Vec<u8>) -> Result<(), String> {
    let f = GgufFile::from_bytes(bytes).map_err(|e| e.to_string())?;
    for (k, v) in f.metadata().iter() {
        let _ = (k.len(), v.type_description(), f.metadata().get_u32(k), f.metadata().get_str(k));
    }
    for t in f.tensors() {
        let _ = f.tensor_data(&t.name).map(|d| d.len());
        let _ = f.tensor_bytes(&t.name).map(|d| d.len());
        let _ = f.tensor_f32(&t.name);
    }
    Ok(())
}

fn no_panic(what: &str, bytes: Vec<u8>) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(|| exercise(bytes))).unwrap_or_else(|_| panic!("panicked on {what}"))
}

/// The end of the last tensor's data: cutting the file anywhere before it must fail.
fn data_end(bytes: &[u8]) -> usize {
    let f = GgufFile::from_bytes(bytes.to_vec()).unwrap();
    f.tensors().iter().map(|t| t.file_range().end as usize).max().unwrap_or(0)
}

fn check_file(name: &str, bytes: &[u8], data_stride: usize) {
    let end = data_end(bytes);
    let header_end = GgufFile::from_bytes(bytes.to_vec()).unwrap().data_offset() as usize;
    for cut in 0..bytes.len() {
        let stride = if cut < header_end { 1 } else { data_stride };
        if cut % stride != 0 {
            continue;
        }
        let r = no_panic(&format!("{name} cut at {cut}"), bytes[..cut].to_vec());
        if cut < end {
            assert!(r.is_err(), "{name} cut at {cut} of {} should not open", bytes.len());
        }
    }
    for pos in 0..header_end {
        for pattern in [0xff, 0x80, 0x01, 0x7f, 0x00] {
            let mut b = bytes.to_vec();
            b[pos] = if pattern == 0x00 { 0 } else { b[pos] ^ pattern };
            let _ = no_panic(&format!("{name} byte {pos} ^ {pattern:#x}"), b);
        }
    }
    // Random multi-byte damage anywhere, from a fixed seed.
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for round in 0..400 {
        let mut b = bytes.to_vec();
        for _ in 0..1 + next() % 4 {
            let pos = (next() % b.len() as u64) as usize;
            b[pos] = next() as u8;
        }
        let _ = no_panic(&format!("{name} random damage {round}"), b);
    }
}

#[test]
fn rich_file_survives_truncation_and_corruption() {
    check_file("rich", &common::rich_file(32), 7);
}

#[test]
fn generated_model_survives_truncation_and_corruption() {
    let c = ModelConfig {
        n_layers: 1,
        n_embd: 64,
        n_ff: 128,
        n_vocab: 300,
        file_type: FileType::Q8_0,
        ..ModelConfig::tiny()
    };
    let mut bytes = Vec::new();
    write_model(&c, &mut bytes).unwrap();
    check_file("model", &bytes, 997);
}
