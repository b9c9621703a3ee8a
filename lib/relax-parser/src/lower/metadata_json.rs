//! TVM's `show_meta=True` preamble: `metadata = tvm.ir.load_json("""{...}""")` before the
//! module, holding the data of the `metadata["relax.expr.Constant"][i]` references.
//!
//! The JSON is TVM's object graph. Two layouts are read:
//!
//! * TVM 0.21 and later (tvm-ffi): `{"root_index": R, "nodes": [{"type": T, "data": D}]}`;
//!   the root is an `ffi.Map` (`data` = key, value, key, value node indices), its values
//!   `ffi.Array`s of `relax.expr.Constant` nodes, whose `data` names an `ffi.Tensor` node
//!   holding the base64 tensor blob (TVM 0.27: `ir.GenericConst` nodes and `value`).
//! * Earlier releases: `{"root": R, "nodes": [{"type_key": T, "keys": [...], "data": [...],
//!   "attrs": {...}}], "b64ndarrays": [...]}`; a constant's `attrs.data` is an index into
//!   `b64ndarrays`.
//!
//! A blob is TVM's `SaveDLTensor` format, little-endian: magic `0xDD5E40F096B4A13F`, a
//! reserved u64, the device (two i32), `ndim` (i32), the dtype (code u8, bits u8, lanes
//! u16), the shape (`ndim` i64), the byte count (i64), the bytes.

use relax_ir::{ConstData, ConstPayload, DataType};
use serde_json::Value;

/// The constants of a `load_json` document, as `(key, index, data)`.
pub(crate) fn read_load_json(text: &str) -> Result<Vec<(String, u32, ConstData)>, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("the metadata is not valid JSON: {e}"))?;
    let nodes = doc.get("nodes").and_then(Value::as_array).ok_or("the metadata has no `nodes` list")?;
    let g = Graph { nodes, blobs: doc.get("b64ndarrays").and_then(Value::as_array) };
    let root = doc.get("root_index").or_else(|| doc.get("root")).and_then(Value::as_u64).ok_or("no root node")?;
    let mut out = Vec::new();
    for (key, array) in g.map_entries(root)? {
        for (i, c) in g.array(array)?.into_iter().enumerate() {
            let index = u32::try_from(i).map_err(|_| "too many constants")?;
            out.push((key.clone(), index, g.constant(c)?));
        }
    }
    Ok(out)
}

struct Graph<'a> {
    nodes: &'a [Value],
    blobs: Option<&'a Vec<Value>>,
}

impl<'a> Graph<'a> {
    fn node(&self, i: u64) -> Result<&'a Value, String> {
        usize::try_from(i).ok().and_then(|i| self.nodes.get(i)).ok_or_else(|| format!("no node {i}"))
    }

    fn type_of(&self, i: u64) -> Result<&'a str, String> {
        let n = self.node(i)?;
        Ok(n.get("type").or_else(|| n.get("type_key")).and_then(Value::as_str).unwrap_or(""))
    }

    fn indices(v: Option<&Value>) -> Result<Vec<u64>, String> {
        let list = v.and_then(Value::as_array).ok_or("expected a list of node indices")?;
        list.iter().map(|x| x.as_u64().ok_or_else(|| "expected a node index".to_string())).collect()
    }

    fn string(&self, i: u64) -> Result<String, String> {
        let n = self.node(i)?;
        let s = n.get("data").and_then(Value::as_str).or_else(|| n.get("repr_str").and_then(Value::as_str));
        s.map(str::to_string).ok_or_else(|| format!("node {i} is not a string"))
    }

    /// The `(key, value)` pairs of a map of strings.
    fn map_entries(&self, i: u64) -> Result<Vec<(String, u64)>, String> {
        let t = self.type_of(i)?;
        if t != "ffi.Map" && t != "Map" {
            return Err(format!("the root is `{t}`, not a map"));
        }
        let n = self.node(i)?;
        let data = Self::indices(n.get("data"))?;
        if let Some(keys) = n.get("keys").and_then(Value::as_array).filter(|k| !k.is_empty()) {
            let keys: Vec<String> = keys.iter().map(|k| k.as_str().unwrap_or_default().to_string()).collect();
            return Ok(keys.into_iter().zip(data).collect());
        }
        data.chunks_exact(2).map(|kv| Ok((self.string(kv[0])?, kv[1]))).collect()
    }

    fn array(&self, i: u64) -> Result<Vec<u64>, String> {
        let t = self.type_of(i)?;
        if t != "ffi.Array" && t != "Array" {
            return Err(format!("expected an array, found `{t}`"));
        }
        Self::indices(self.node(i)?.get("data"))
    }

    /// A `relax.expr.Constant` node's tensor.
    fn constant(&self, i: u64) -> Result<ConstData, String> {
        let n = self.node(i)?;
        let field =
            |name: &str| n.get("data").and_then(|d| d.get(name)).or_else(|| n.get("attrs").and_then(|a| a.get(name)));
        // `data` (`relax.expr.Constant`), or `value` (TVM 0.27's `ir.GenericConst`).
        let data = field("data").or_else(|| field("value")).ok_or_else(|| format!("node {i} is not a constant"))?;
        let blob = match (data.as_u64(), data.as_str().and_then(|s| s.parse::<usize>().ok())) {
            // tvm-ffi: the index of an `ffi.Tensor` node.
            (Some(t), _) => self.node(t)?.get("data").and_then(Value::as_str).ok_or("expected a tensor node")?,
            // Earlier releases: an index into `b64ndarrays`, as a string.
            (None, Some(b)) => self.blobs.and_then(|bs| bs.get(b)).and_then(Value::as_str).ok_or("no such tensor")?,
            _ => return Err(format!("constant node {i} has no tensor")),
        };
        decode_tensor(&base64(blob)?)
    }
}

/// Decodes standard base64 (padding optional).
fn base64(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return Err("a tensor blob is not base64".to_string()),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

/// A `SaveDLTensor` blob.
fn decode_tensor(b: &[u8]) -> Result<ConstData, String> {
    let mut at = 0usize;
    let mut take = |n: usize| -> Result<&[u8], String> {
        let s = b.get(at..at.checked_add(n).ok_or("truncated")?).ok_or("a tensor blob is truncated")?;
        at += n;
        Ok(s)
    };
    let u64_at = |s: &[u8]| u64::from_le_bytes(s.try_into().unwrap_or([0; 8]));
    if u64_at(take(8)?) != 0xDD5E_40F0_96B4_A13F {
        return Err("a tensor blob lacks TVM's magic number".to_string());
    }
    take(8 + 8)?; // reserved, device
    let ndim = i32::from_le_bytes(take(4)?.try_into().unwrap_or([0; 4]));
    let dt = take(4)?;
    let (code, bits, lanes) = (dt[0], dt[1], u16::from_le_bytes([dt[2], dt[3]]));
    let name = match (code, bits) {
        (1, 1) | (6, 8) | (6, 1) => "bool".to_string(),
        (0, _) => format!("int{bits}"),
        (1, _) => format!("uint{bits}"),
        (2, _) => format!("float{bits}"),
        (4, 16) => "bfloat16".to_string(),
        _ => return Err(format!("unsupported tensor dtype code {code} with {bits} bits")),
    };
    let name = if lanes > 1 { format!("{name}x{lanes}") } else { name };
    let dtype = DataType::parse(&name).ok_or_else(|| format!("unsupported tensor dtype `{name}`"))?;
    if !(0..=64).contains(&ndim) {
        return Err(format!("a tensor blob has rank {ndim}"));
    }
    let mut shape = Vec::new();
    for _ in 0..ndim {
        let d = u64_at(take(8)?) as i64;
        if d < 0 {
            return Err(format!("a tensor blob has the negative dim {d}"));
        }
        shape.push(d);
    }
    let size = usize::try_from(u64_at(take(8)?)).map_err(|_| "a tensor blob is too large")?;
    let count = shape.iter().try_fold(1u128, |acc, &d| acc.checked_mul(d as u128)).ok_or("too many elements")?;
    if count * u128::from(dtype.bytes()) != size as u128 {
        return Err(format!("a tensor blob of shape {shape:?} and dtype {name} holds {size} bytes"));
    }
    let bytes = take(size)?.to_vec();
    Ok(ConstData { dtype, shape: Some(shape), payload: ConstPayload::Data(bytes) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A float32 [2] tensor [1.0, 2.0] in TVM's blob format.
    fn blob() -> String {
        let mut b = Vec::new();
        b.extend(0xDD5E_40F0_96B4_A13Fu64.to_le_bytes());
        b.extend(0u64.to_le_bytes());
        b.extend([1, 0, 0, 0, 0, 0, 0, 0]);
        b.extend(1i32.to_le_bytes());
        b.extend([2, 32, 1, 0]);
        b.extend(2i64.to_le_bytes());
        b.extend(8i64.to_le_bytes());
        b.extend(1.0f32.to_le_bytes());
        b.extend(2.0f32.to_le_bytes());
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut s = String::new();
        for c in b.chunks(3) {
            let n = (u32::from(c[0]) << 16)
                | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
                | u32::from(*c.get(2).unwrap_or(&0));
            for k in 0..=c.len() {
                s.push(A[((n >> (18 - 6 * k)) & 63) as usize] as char);
            }
        }
        s
    }

    #[test]
    fn reads_both_layouts() {
        let b = blob();
        let new = format!(
            r#"{{"root_index": 3, "nodes": [{{"type": "ffi.String", "data": "relax.expr.Constant"}},
            {{"type": "ffi.Tensor", "data": "{b}"}}, {{"type": "relax.expr.Constant", "data": {{"data": 1}}}},
            {{"type": "ffi.Map", "data": [0, 4]}}, {{"type": "ffi.Array", "data": [2]}}]}}"#
        );
        let old = format!(
            r#"{{"root": 1, "nodes": [{{"type_key": ""}}, {{"type_key": "Map", "keys": ["relax.expr.Constant"], "data": [2]}},
            {{"type_key": "Array", "data": [3]}}, {{"type_key": "relax.expr.Constant", "attrs": {{"data": "0"}}}}],
            "b64ndarrays": ["{b}"]}}"#
        );
        for text in [new, old] {
            let got = read_load_json(&text).unwrap();
            assert_eq!(got.len(), 1);
            let (k, i, d) = &got[0];
            assert_eq!((k.as_str(), *i, d.shape.clone()), ("relax.expr.Constant", 0, Some(vec![2])));
            let ConstPayload::Data(bytes) = &d.payload else { panic!("no data") };
            assert_eq!(bytes[4..8], 2.0f32.to_le_bytes());
        }
    }

    #[test]
    fn rejects_bad_input() {
        assert!(read_load_json("{").is_err());
        assert!(read_load_json(r#"{"root": 0, "nodes": [{"type_key": "Array", "data": []}]}"#).is_err());
        assert!(decode_tensor(&[0; 7]).is_err());
        let mut b = base64(&blob()).unwrap();
        b.truncate(b.len() - 1);
        assert!(decode_tensor(&b).is_err());
    }
}
