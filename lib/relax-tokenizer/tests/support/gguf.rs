//! A minimal GGUF writer and reader for the vocabulary keys, enough to hand a
//! vocabulary to llama.cpp (`Llama(path, vocab_only=True)`) and to read llama.cpp's
//! own vocabulary files back into a [`Vocab`]. Not the project's GGUF crate.

use relax_tokenizer::{ModelKind, TokenType, Vocab};
use std::io::{self, Read, Write};

const STRING: u32 = 8;
const ARRAY: u32 = 9;
const UINT32: u32 = 4;
const INT32: u32 = 5;
const FLOAT32: u32 = 6;
const BOOL: u32 = 7;

struct Writer {
    buf: Vec<u8>,
    count: u64,
}

impl Writer {
    fn key(&mut self, key: &str, ty: u32) {
        self.string(key.as_bytes());
        self.buf.extend(ty.to_le_bytes());
        self.count += 1;
    }

    fn string(&mut self, s: &[u8]) {
        self.buf.extend((s.len() as u64).to_le_bytes());
        self.buf.extend(s);
    }

    fn str_kv(&mut self, key: &str, value: &str) {
        self.key(key, STRING);
        self.string(value.as_bytes());
    }

    fn u32_kv(&mut self, key: &str, value: u32) {
        self.key(key, UINT32);
        self.buf.extend(value.to_le_bytes());
    }

    fn bool_kv(&mut self, key: &str, value: bool) {
        self.key(key, BOOL);
        self.buf.push(value as u8);
    }

    fn array_header(&mut self, key: &str, ty: u32, len: usize) {
        self.key(key, ARRAY);
        self.buf.extend(ty.to_le_bytes());
        self.buf.extend((len as u64).to_le_bytes());
    }
}

/// The GGUF file llama.cpp loads as a vocabulary-only Llama model.
pub fn write(vocab: &Vocab, out: &mut impl Write) -> io::Result<()> {
    let mut w = Writer { buf: Vec::new(), count: 0 };
    w.str_kv("general.architecture", "llama");
    if let Some(name) = &vocab.general_name {
        w.str_kv("general.name", name);
    }
    for (key, value) in [
        ("llama.block_count", 1),
        ("llama.context_length", 4096),
        ("llama.embedding_length", 64),
        ("llama.feed_forward_length", 128),
        ("llama.attention.head_count", 4),
        ("llama.attention.head_count_kv", 4),
        ("llama.rope.dimension_count", 16),
        ("llama.vocab_size", vocab.tokens.len() as u32),
    ] {
        w.u32_kv(key, value);
    }
    w.key("llama.attention.layer_norm_rms_epsilon", FLOAT32);
    w.buf.extend(1e-5f32.to_le_bytes());
    w.str_kv("tokenizer.ggml.model", vocab.model.gguf_name());
    if let Some(pre) = &vocab.pre {
        w.str_kv("tokenizer.ggml.pre", pre);
    }
    w.array_header("tokenizer.ggml.tokens", STRING, vocab.tokens.len());
    for t in &vocab.tokens {
        w.string(t);
    }
    if !vocab.scores.is_empty() {
        w.array_header("tokenizer.ggml.scores", FLOAT32, vocab.scores.len());
        for s in &vocab.scores {
            w.buf.extend(s.to_le_bytes());
        }
    }
    if !vocab.token_types.is_empty() {
        w.array_header("tokenizer.ggml.token_type", INT32, vocab.token_types.len());
        for t in &vocab.token_types {
            w.buf.extend(t.gguf_value().to_le_bytes());
        }
    }
    if !vocab.merges.is_empty() {
        w.array_header("tokenizer.ggml.merges", STRING, vocab.merges.len());
        for m in &vocab.merges {
            w.string(m.as_bytes());
        }
    }
    let s = &vocab.special;
    for (key, id) in [
        ("bos_token_id", s.bos),
        ("eos_token_id", s.eos),
        ("eot_token_id", s.eot),
        ("unknown_token_id", s.unk),
        ("padding_token_id", s.pad),
    ] {
        if let Some(id) = id {
            w.u32_kv(&format!("tokenizer.ggml.{key}"), id);
        }
    }
    for (key, flag) in [
        ("add_bos_token", vocab.add_bos),
        ("add_eos_token", vocab.add_eos),
        ("add_space_prefix", vocab.add_space_prefix),
    ] {
        if let Some(flag) = flag {
            w.bool_kv(&format!("tokenizer.ggml.{key}"), flag);
        }
    }
    out.write_all(b"GGUF")?;
    out.write_all(&3u32.to_le_bytes())?;
    out.write_all(&0u64.to_le_bytes())?;
    out.write_all(&w.count.to_le_bytes())?;
    out.write_all(&w.buf)?;
    // No tensors: pad the (empty) data section to the default alignment of 32.
    let len = 24 + w.buf.len();
    out.write_all(&vec![0u8; (32 - len % 32) % 32])
}

/// A GGUF value, as far as the vocabulary keys need.
#[derive(Debug, Clone)]
enum Value {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(Vec<u8>),
    Array(Vec<Value>),
}

struct Reader<'a> {
    data: &'a [u8],
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.data.len() < n {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "truncated GGUF"));
        }
        let (head, tail) = self.data.split_at(n);
        self.data = tail;
        Ok(head)
    }

    fn u32(&mut self) -> io::Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }

    fn u64(&mut self) -> io::Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }

    fn string(&mut self) -> io::Result<Vec<u8>> {
        let n = self.u64()? as usize;
        Ok(self.take(n)?.to_vec())
    }

    fn value(&mut self, ty: u32) -> io::Result<Value> {
        let fixed = |r: &mut Self, n: usize| -> io::Result<[u8; 8]> {
            let mut b = [0u8; 8];
            b[..n].copy_from_slice(r.take(n)?);
            Ok(b)
        };
        Ok(match ty {
            0 => Value::Int(self.take(1)?[0] as i64),
            1 => Value::Int(self.take(1)?[0] as i8 as i64),
            2 => Value::Int(u16::from_le_bytes(self.take(2)?.try_into().unwrap()) as i64),
            3 => Value::Int(i16::from_le_bytes(self.take(2)?.try_into().unwrap()) as i64),
            4 => Value::Int(self.u32()? as i64),
            5 => Value::Int(self.u32()? as i32 as i64),
            6 => Value::Float(f32::from_le_bytes(self.take(4)?.try_into().unwrap()) as f64),
            7 => Value::Bool(self.take(1)?[0] != 0),
            8 => Value::Str(self.string()?),
            9 => {
                let ty = self.u32()?;
                let n = self.u64()? as usize;
                Value::Array((0..n).map(|_| self.value(ty)).collect::<io::Result<_>>()?)
            }
            10 | 11 => Value::Int(i64::from_le_bytes(fixed(self, 8)?)),
            12 => Value::Float(f64::from_le_bytes(fixed(self, 8)?)),
            _ => return Err(io::Error::new(io::ErrorKind::InvalidData, "bad GGUF type")),
        })
    }
}

/// The vocabulary of a GGUF file (its `tokenizer.ggml.*` keys and `general.name`).
pub fn read(input: &mut impl Read) -> io::Result<Vocab> {
    let mut data = Vec::new();
    input.read_to_end(&mut data)?;
    let mut r = Reader { data: &data };
    if r.take(4)? != b"GGUF" {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "not a GGUF file"));
    }
    let _version = r.u32()?;
    let _tensors = r.u64()?;
    let n = r.u64()?;
    let mut kv = std::collections::HashMap::new();
    for _ in 0..n {
        let key = String::from_utf8_lossy(&r.string()?).into_owned();
        let ty = r.u32()?;
        kv.insert(key, r.value(ty)?);
    }
    let get = |k: &str| kv.get(&format!("tokenizer.ggml.{k}"));
    let text = |v: Option<&Value>| match v {
        Some(Value::Str(s)) => Some(String::from_utf8_lossy(s).into_owned()),
        _ => None,
    };
    let model = text(get("model")).unwrap_or_default();
    let model =
        ModelKind::from_gguf_name(&model).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    let array = |v: Option<&Value>| match v {
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    };
    let tokens = array(get("tokens"))
        .into_iter()
        .map(|v| match v {
            Value::Str(s) => s,
            _ => Vec::new(),
        })
        .collect();
    let mut vocab = Vocab::new(model, tokens);
    vocab.pre = text(get("pre"));
    vocab.general_name = text(kv.get("general.name"));
    vocab.scores = array(get("scores"))
        .into_iter()
        .map(|v| match v {
            Value::Float(f) => f as f32,
            Value::Int(i) => i as f32,
            _ => 0.0,
        })
        .collect();
    vocab.token_types = array(get("token_type"))
        .into_iter()
        .map(|v| match v {
            Value::Int(i) => TokenType::from_gguf(i as i32),
            _ => TokenType::Undefined,
        })
        .collect();
    vocab.merges = array(get("merges"))
        .into_iter()
        .map(|v| match v {
            Value::Str(s) => String::from_utf8_lossy(&s).into_owned(),
            _ => String::new(),
        })
        .collect();
    let id = |k: &str| match get(k) {
        Some(Value::Int(i)) => u32::try_from(*i).ok(),
        _ => None,
    };
    vocab.special.bos = id("bos_token_id");
    vocab.special.eos = id("eos_token_id");
    vocab.special.eot = id("eot_token_id");
    vocab.special.eom = id("eom_token_id");
    vocab.special.unk = id("unknown_token_id");
    vocab.special.sep = id("seperator_token_id");
    vocab.special.pad = id("padding_token_id");
    let flag = |k: &str| match get(k) {
        Some(Value::Bool(b)) => Some(*b),
        _ => None,
    };
    vocab.add_bos = flag("add_bos_token");
    vocab.add_eos = flag("add_eos_token");
    vocab.add_space_prefix = flag("add_space_prefix");
    vocab.remove_extra_whitespaces = flag("remove_extra_whitespaces");
    Ok(vocab)
}
