//! The random model generator: llama.cpp's names, shapes and types, metadata a loader
//! needs, determinism, and weights of the intended size.

use relax_gguf::generate::{plan, write_model};
use relax_gguf::{FileType, GgmlType, GgufFile, ModelConfig, RopeScaling, VocabKind};

fn generate(c: &ModelConfig) -> Vec<u8> {
    let mut out = Vec::new();
    write_model(c, &mut out).unwrap();
    out
}

#[test]
fn tiny_model_reads_back() {
    let t = std::time::Instant::now();
    let c = ModelConfig::tiny();
    let bytes = generate(&c);
    eprintln!("tiny: {} bytes in {:?}", bytes.len(), t.elapsed());
    let f = GgufFile::from_bytes(bytes).unwrap();
    let md = f.metadata();
    assert_eq!(md.architecture().unwrap(), "llama");
    assert_eq!(md.get_u32("llama.block_count").unwrap(), 2);
    assert_eq!(md.get_u32("llama.embedding_length").unwrap(), 256);
    assert_eq!(md.get_u32("llama.attention.head_count_kv").unwrap(), 2);
    assert_eq!(md.get_u32("llama.rope.dimension_count").unwrap(), 64);
    assert_eq!(md.get_f32("llama.attention.layer_norm_rms_epsilon").unwrap(), 1e-5);
    assert_eq!(md.get_u32("general.file_type").unwrap(), 15);
    assert_eq!(md.get_str("tokenizer.ggml.model").unwrap(), "llama");
    assert_eq!(md.get_str_array("tokenizer.ggml.tokens").unwrap().len(), 512);
    assert_eq!(md.get_f32_array("tokenizer.ggml.scores").unwrap().len(), 512);
    assert_eq!(md.get_i32_array("tokenizer.ggml.token_type").unwrap()[3], 6);
    let types: Vec<(&str, GgmlType)> = f.tensors().iter().map(|t| (t.name.as_str(), t.ggml_type)).collect();
    assert_eq!(types.len(), 3 + 2 * 9);
    assert!(types.contains(&("output.weight", GgmlType::Q6_K)));
    assert!(types.contains(&("blk.1.attn_v.weight", GgmlType::Q6_K)));
    assert!(types.contains(&("blk.1.attn_q.weight", GgmlType::Q4_K)));
    assert!(types.contains(&("blk.0.ffn_norm.weight", GgmlType::F32)));
    // Weights: std 0.02; norms: mean 1.
    let w = f.tensor_f32("blk.0.ffn_up.weight").unwrap();
    let rms = (w.iter().map(|x| x * x).sum::<f32>() / w.len() as f32).sqrt();
    assert!((rms - 0.02).abs() < 0.003, "{rms}");
    let n = f.tensor_f32("blk.0.attn_norm.weight").unwrap();
    let mean = n.iter().sum::<f32>() / n.len() as f32;
    assert!((mean - 1.0).abs() < 0.01, "{mean}");
}

#[test]
fn same_seed_same_bytes_any_thread_count() {
    let c = ModelConfig { file_type: FileType::Q4_0, n_layers: 1, ..ModelConfig::tiny() };
    let a = generate(&c);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let b = pool.install(|| generate(&c));
    assert!(a == b);
    let d = generate(&ModelConfig { seed: 1, ..c });
    assert!(a != d && a.len() == d.len());
}

#[test]
fn every_file_type_and_qwen2() {
    for ft in FileType::ALL {
        let c = ModelConfig { file_type: ft, n_layers: 1, n_vocab: 300, ..ModelConfig::tiny() };
        let f = GgufFile::from_bytes(generate(&c)).unwrap();
        for t in f.tensors() {
            let v = f.tensor_f32(&t.name).unwrap();
            assert!(v.iter().all(|x| x.is_finite()), "{}", t.name);
        }
        let q = f.tensor("blk.0.attn_q.weight").unwrap().ggml_type;
        assert_eq!(q, ft.base_type(), "{}", ft.name());
    }
    let c = ModelConfig { n_vocab: 1000, ..ModelConfig::tiny_qwen2() };
    let f = GgufFile::from_bytes(generate(&c)).unwrap();
    assert_eq!(f.metadata().architecture().unwrap(), "qwen2");
    assert!(f.get_tensor("output.weight").is_none());
    assert_eq!(f.tensor("token_embd.weight").unwrap().ggml_type, GgmlType::Q6_K);
    assert_eq!(f.tensor("blk.0.attn_k.bias").unwrap().dims, [128]);
    assert_eq!(f.metadata().get_str("tokenizer.ggml.pre").unwrap(), "qwen2");
    assert_eq!(f.metadata().get_str_array("tokenizer.ggml.merges").unwrap().len(), 1000 - 256 - 3);
}

#[test]
fn rope_scaling_is_stored_as_llama_cpp_does() {
    let c = ModelConfig { rope_scaling: Some(RopeScaling::Linear { factor: 4.0 }), n_layers: 1, ..ModelConfig::tiny() };
    let f = GgufFile::from_bytes(generate(&c)).unwrap();
    assert_eq!(f.metadata().get_str("llama.rope.scaling.type").unwrap(), "linear");
    assert_eq!(f.metadata().get_f32("llama.rope.scaling.factor").unwrap(), 4.0);
    let c = ModelConfig {
        rope_scaling: Some(RopeScaling::Llama3 {
            factor: 8.0,
            low_freq_factor: 1.0,
            high_freq_factor: 4.0,
            original_context: 64,
        }),
        n_layers: 1,
        vocab: VocabKind::Bpe,
        ..ModelConfig::tiny()
    };
    let f = GgufFile::from_bytes(generate(&c)).unwrap();
    let t = f.tensor("rope_freqs.weight").unwrap();
    assert_eq!((t.dims.clone(), t.ggml_type), (vec![32], GgmlType::F32));
    assert_eq!(f.metadata().get_str("tokenizer.ggml.pre").unwrap(), "llama-bpe");
}

#[test]
fn tinyllama_plan() {
    let specs = plan(&ModelConfig::tinyllama()).unwrap();
    assert_eq!(specs.len(), 3 + 22 * 9);
    let q6 = specs.iter().filter(|s| s.ggml_type == GgmlType::Q6_K).count();
    // output.weight, and attn_v and ffn_down of layers 0, 1, 4, 7, 10, 13, 16, 19, 20, 21.
    assert_eq!(q6, 1 + 10 + 10);
    let of = |n: &str| specs.iter().find(|s| s.name == n).unwrap();
    assert_eq!(of("blk.13.ffn_down.weight").ggml_type, GgmlType::Q6_K);
    assert_eq!(of("blk.14.ffn_down.weight").ggml_type, GgmlType::Q4_K);
    assert_eq!(of("blk.0.attn_k.weight").dims, [2048, 256]);
    assert_eq!(of("blk.0.ffn_down.weight").dims, [5632, 2048]);
}
