//! The registry of packed functions: what `R.call_packed`, `R.call_pure_packed`,
//! `R.call_dps_packed` and `R.call_builtin_with_ctx` call by name (`docs/runtime.md`
//! lists them with their semantics).
//!
//! * The `vm.builtin.*` functions of VM-lowered modules: the shape heap
//!   (`alloc_shape_heap`, `match_shape`, `make_shape`, `match_prim_value`,
//!   `make_prim_value`), the checks (`check_tensor_info`, `check_shape_info`,
//!   `check_prim_value_info`, `check_tuple_info`, `check_func_info`), `reshape`,
//!   `shape_of`, `tuple_getitem`, `null_value`, `read_if_cond`, `copy`, `to_device`,
//!   `tensor_to_shape`, `call_tir_dyn`.
//! * The attention KV cache of TVM's `lm_support`: `vm.builtin.attention_kv_cache_create`
//!   / `_append` / `_view`.
//! * The runtime functions legalization lowers ops to: `relax.run.print`,
//!   `relax.run.assert_op`, `relax.run.shape_to_tensor`, `relax.run.nonzero`,
//!   `relax.run.unique` (`crate::unique`).
//! * A reference DPS matmul, `relax.run.matmul(a, b, out)` (numpy's `matmul`).

use std::cell::RefCell;
use std::rc::Rc;

use relax_ir::DataType;

use crate::error::{RunError, RunResult};
use crate::relax::call::format_values;
use crate::relax::exec::scalar_of;
use crate::scalar::Scalar;
use crate::value::{KvCache, Object, Tensor, Value, numel, shape_text};

/// Names of the packed functions of the registry.
pub const NAMES: &[&str] = &[
    "vm.builtin.alloc_shape_heap",
    "vm.builtin.match_shape",
    "vm.builtin.make_shape",
    "vm.builtin.match_prim_value",
    "vm.builtin.make_prim_value",
    "vm.builtin.check_tensor_info",
    "vm.builtin.check_shape_info",
    "vm.builtin.check_prim_value_info",
    "vm.builtin.check_tuple_info",
    "vm.builtin.check_func_info",
    "vm.builtin.reshape",
    "vm.builtin.shape_of",
    "vm.builtin.tuple_getitem",
    "vm.builtin.null_value",
    "vm.builtin.call_tir_dyn",
    "vm.builtin.read_if_cond",
    "vm.builtin.copy",
    "vm.builtin.to_device",
    "vm.builtin.tensor_to_shape",
    "vm.builtin.attention_kv_cache_create",
    "vm.builtin.attention_kv_cache_append",
    "vm.builtin.attention_kv_cache_view",
    "relax.run.print",
    "relax.run.assert_op",
    "relax.run.shape_to_tensor",
    "relax.run.nonzero",
    "relax.run.unique",
    "relax.run.matmul",
];

fn int(v: &Value, what: &str) -> RunResult<i64> {
    match v {
        Value::Prim(s) => Ok(s.as_i64()),
        other => Err(RunError::new(format!("{what}: expected an integer, got {}", other.describe()))),
    }
}

fn tensor<'a>(v: &'a Value, what: &str) -> RunResult<&'a Tensor> {
    match v {
        Value::Tensor(t) => Ok(t),
        other => Err(RunError::new(format!("{what}: expected a tensor, got {}", other.describe()))),
    }
}

fn shape(v: &Value, what: &str) -> RunResult<Vec<i64>> {
    match v {
        Value::Shape(s) => Ok(s.clone()),
        other => Err(RunError::new(format!("{what}: expected a shape, got {}", other.describe()))),
    }
}

fn context(args: &[Value]) -> String {
    match args.last() {
        Some(Value::Str(s)) => format!(" ({})", s.trim()),
        _ => String::new(),
    }
}

/// The error of a check builtin: `expected WHAT, got GOT` and the check's context.
fn expected(what: impl std::fmt::Display, got: impl std::fmt::Display, args: &[Value]) -> RunError {
    RunError::new(format!("expected {what}, got {got}{}", context(args)))
}

fn arity(name: &str, args: &[Value], n: usize) -> RunResult<()> {
    if args.len() < n {
        return Err(RunError::new(format!("`{name}` takes at least {n} arguments, got {}", args.len())));
    }
    Ok(())
}

/// What packed functions need from the engine that calls them (the Relax interpreter or
/// the VM of [`crate::vm`]).
pub trait Host {
    /// Calls a function value (`vm.builtin.call_tir_dyn`).
    fn call_value(&self, callee: &Value, args: Vec<Value>) -> RunResult<Value>;
    /// Appends a printed line (`relax.run.print`).
    fn print_line(&self, text: &str);
}

/// Calls the packed function `name`.
pub fn call_packed(host: &dyn Host, name: &str, args: &[Value]) -> RunResult<Value> {
    // The shape heap is null in functions whose shapes are all static.
    let heap_of = |v: &Value| -> RunResult<Option<Tensor>> {
        match v {
            Value::Null => Ok(None),
            other => Ok(Some(tensor(other, name)?.clone())),
        }
    };
    let slot = |heap: &Option<Tensor>, i: i64| -> RunResult<(Tensor, usize)> {
        match heap {
            Some(h) if i >= 0 && (i as usize) < h.numel() => Ok((h.clone(), i as usize)),
            _ => Err(RunError::new(format!("`{name}`: shape heap slot {i} out of range"))),
        }
    };
    let heap_i = |heap: &Option<Tensor>, i: i64| -> RunResult<i64> {
        let (h, i) = slot(heap, i)?;
        Ok(h.get(i).as_i64())
    };
    match name {
        "vm.builtin.alloc_shape_heap" => {
            arity(name, args, 1)?;
            let n = int(&args[0], name)?;
            Ok(Value::Tensor(Tensor::zeros(&[n], DataType::INT64)))
        }
        "vm.builtin.match_shape" => {
            arity(name, args, 3)?;
            let actual = match &args[0] {
                Value::Tensor(t) => t.shape.clone(),
                Value::Shape(s) => s.clone(),
                other => {
                    return Err(RunError::new(format!(
                        "`{name}`: expected a tensor or shape, got {}",
                        other.describe()
                    )));
                }
            };
            let heap = heap_of(&args[1])?;
            let ndim = int(&args[2], name)?;
            if actual.len() as i64 != ndim {
                return Err(RunError::new(format!(
                    "shape mismatch: expected rank {ndim}, got shape {}{}",
                    shape_text(&actual),
                    context(args)
                )));
            }
            for (i, &a) in actual.iter().enumerate() {
                let code = int(&args[3 + 2 * i], name)?;
                let v = int(&args[4 + 2 * i], name)?;
                match code {
                    0 if a != v => {
                        return Err(RunError::new(format!(
                            "shape mismatch: dim {i} of {} is {a}, expected {v}{}",
                            shape_text(&actual),
                            context(args)
                        )));
                    }
                    1 => {
                        let (h, k) = slot(&heap, v)?;
                        h.set(k, Scalar::int(DataType::INT64, a));
                    }
                    3 => {
                        let want = heap_i(&heap, v)?;
                        if a != want {
                            return Err(RunError::new(format!(
                                "shape mismatch: dim {i} of {} is {a}, expected {want}{}",
                                shape_text(&actual),
                                context(args)
                            )));
                        }
                    }
                    _ => {}
                }
            }
            Ok(Value::unit())
        }
        "vm.builtin.match_prim_value" => {
            arity(name, args, 4)?;
            let a =
                scalar_of(&args[0]).ok_or_else(|| RunError::new(format!("`{name}`: expected a prim value")))?.as_i64();
            let heap = heap_of(&args[1])?;
            let code = int(&args[2], name)?;
            let v = int(&args[3], name)?;
            match code {
                0 if a != v => {
                    return Err(RunError::new(format!("value mismatch: {a}, expected {v}{}", context(args))));
                }
                1 => {
                    let (h, k) = slot(&heap, v)?;
                    h.set(k, Scalar::int(DataType::INT64, a));
                }
                3 => {
                    let want = heap_i(&heap, v)?;
                    if a != want {
                        return Err(RunError::new(format!("value mismatch: {a}, expected {want}{}", context(args))));
                    }
                }
                _ => {}
            }
            Ok(Value::unit())
        }
        "vm.builtin.make_shape" => {
            arity(name, args, 2)?;
            let heap = heap_of(&args[0])?;
            let ndim = int(&args[1], name)?;
            let mut out = Vec::new();
            for i in 0..ndim as usize {
                let code = int(&args[2 + 2 * i], name)?;
                let v = int(&args[3 + 2 * i], name)?;
                out.push(if code == 0 { v } else { heap_i(&heap, v)? });
            }
            Ok(Value::Shape(out))
        }
        "vm.builtin.make_prim_value" => {
            arity(name, args, 3)?;
            let heap = heap_of(&args[0])?;
            let code = int(&args[1], name)?;
            let v = int(&args[2], name)?;
            let x = if code == 0 { v } else { heap_i(&heap, v)? };
            Ok(Value::Prim(Scalar::int(DataType::INT64, x)))
        }
        "vm.builtin.check_tensor_info" => {
            arity(name, args, 3)?;
            let Value::Tensor(t) = &args[0] else {
                return Err(expected("a tensor", args[0].describe(), args));
            };
            let ndim = int(&args[1], name)?;
            if ndim >= 0 && t.shape.len() as i64 != ndim {
                return Err(expected(format!("rank {ndim}"), args[0].describe(), args));
            }
            if let Value::DType(d) = &args[2]
                && !d.is_void()
                && *d != t.dtype
            {
                return Err(expected(format!("dtype {d}"), args[0].describe(), args));
            }
            Ok(Value::unit())
        }
        "vm.builtin.check_shape_info" => {
            arity(name, args, 2)?;
            let Value::Shape(s) = &args[0] else {
                return Err(expected("a shape", args[0].describe(), args));
            };
            let ndim = int(&args[1], name)?;
            if ndim >= 0 && s.len() as i64 != ndim {
                return Err(expected(format!("a shape of rank {ndim}"), shape_text(s), args));
            }
            Ok(Value::unit())
        }
        "vm.builtin.check_prim_value_info" => {
            arity(name, args, 2)?;
            let Value::Prim(p) = &args[0] else {
                return Err(expected("a prim value", args[0].describe(), args));
            };
            if let Value::DType(d) = &args[1]
                && !d.is_void()
                && *d != p.dtype()
            {
                return Err(expected(format!("a {d} value"), args[0].describe(), args));
            }
            Ok(Value::unit())
        }
        "vm.builtin.check_tuple_info" => {
            arity(name, args, 2)?;
            let Value::Tuple(f) = &args[0] else {
                return Err(expected("a tuple", args[0].describe(), args));
            };
            let n = int(&args[1], name)?;
            if n >= 0 && f.len() as i64 != n {
                return Err(expected(format!("a tuple of {n} fields"), f.len(), args));
            }
            Ok(Value::unit())
        }
        "vm.builtin.check_func_info" => match args.first() {
            Some(Value::Func(_)) => Ok(Value::unit()),
            Some(other) => Err(expected("a function", other.describe(), args)),
            None => Err(RunError::new(format!("`{name}` takes arguments"))),
        },
        "vm.builtin.reshape" => {
            arity(name, args, 2)?;
            let t = tensor(&args[0], name)?;
            let s = shape(&args[1], name)?;
            if numel(&s) != t.numel() {
                return Err(RunError::new(format!(
                    "`{name}`: cannot reshape {} to {}",
                    shape_text(&t.shape),
                    shape_text(&s)
                )));
            }
            Ok(Value::Tensor(Tensor::view(&t.data, t.offset, &s, t.dtype)))
        }
        "vm.builtin.shape_of" => Ok(Value::Shape(tensor(args.first().unwrap_or(&Value::Null), name)?.shape.clone())),
        "vm.builtin.tuple_getitem" => {
            arity(name, args, 2)?;
            let i = int(&args[1], name)?;
            match &args[0] {
                Value::Tuple(f) => {
                    f.get(i as usize).cloned().ok_or_else(|| RunError::new(format!("`{name}`: index {i} out of range")))
                }
                other => Err(RunError::new(format!("`{name}`: expected a tuple, got {}", other.describe()))),
            }
        }
        "vm.builtin.null_value" => Ok(Value::Null),
        "vm.builtin.call_tir_dyn" => {
            // `(func, args..., shape)`: the shape's dims are the trailing scalar arguments.
            arity(name, args, 2)?;
            let mut flat: Vec<Value> = args[1..args.len() - 1].to_vec();
            match &args[args.len() - 1] {
                Value::Shape(s) => flat.extend(s.iter().map(|&x| Value::Prim(Scalar::int(DataType::INT64, x)))),
                other => flat.push(other.clone()),
            }
            host.call_value(&args[0], flat)?;
            Ok(Value::unit())
        }
        "vm.builtin.read_if_cond" => {
            let s = args
                .first()
                .and_then(scalar_of)
                .ok_or_else(|| RunError::new(format!("`{name}`: expected a scalar")))?;
            Ok(Value::Prim(Scalar::bool(s.is_true())))
        }
        "vm.builtin.copy" | "vm.builtin.to_device" => {
            args.first().cloned().ok_or_else(|| RunError::new(format!("`{name}` takes an argument")))
        }
        "vm.builtin.tensor_to_shape" => {
            let t = tensor(args.first().unwrap_or(&Value::Null), name)?;
            Ok(Value::Shape(t.scalars().into_iter().map(Scalar::as_i64).collect()))
        }
        "relax.run.shape_to_tensor" => {
            let s = shape(args.first().unwrap_or(&Value::Null), name)?;
            let n = s.len() as i64;
            Ok(Value::Tensor(Tensor::from_scalars(
                &[n],
                DataType::INT64,
                s.into_iter().map(|x| Scalar::int(DataType::INT64, x)),
            )))
        }
        "vm.builtin.attention_kv_cache_create" => {
            arity(name, args, 3)?;
            let init = tensor(&args[0], name)?;
            let reserve = shape(&args[1], name)?;
            let fill = int(&args[2], name)?;
            let mut c = KvCache { data: Tensor::zeros(&reserve, init.dtype), fill_count: 0 };
            kv_append(&mut c, init)?;
            if fill >= 0 {
                c.fill_count = fill;
            }
            Ok(Value::Object(Object::KvCache(Rc::new(RefCell::new(c)))))
        }
        "vm.builtin.attention_kv_cache_append" => {
            arity(name, args, 2)?;
            let Value::Object(Object::KvCache(c)) = &args[0] else {
                return Err(RunError::new(format!("`{name}`: expected a KV cache, got {}", args[0].describe())));
            };
            kv_append(&mut c.borrow_mut(), tensor(&args[1], name)?)?;
            Ok(args[0].clone())
        }
        "vm.builtin.attention_kv_cache_view" => {
            arity(name, args, 2)?;
            let Value::Object(Object::KvCache(c)) = &args[0] else {
                return Err(RunError::new(format!("`{name}`: expected a KV cache, got {}", args[0].describe())));
            };
            let c = c.borrow();
            let s = shape(&args[1], name)?;
            let d = &c.data.shape;
            if s.first() != Some(&c.fill_count) || s.len() != d.len() || s[1..] != d[1..] {
                return Err(RunError::new(format!(
                    "`{name}`: the view shape {} does not match the cache ({} rows of {})",
                    shape_text(&s),
                    c.fill_count,
                    shape_text(&d[1..])
                )));
            }
            Ok(Value::Tensor(Tensor::view(&c.data.data, c.data.offset, &s, c.data.dtype)))
        }
        "relax.run.print" => {
            let fmt = args.first().cloned().unwrap_or(Value::Str(String::new()));
            let text = format_values(&fmt, args.get(1..).unwrap_or(&[]));
            host.print_line(&text);
            Ok(Value::unit())
        }
        "relax.run.assert_op" => {
            let ok = args
                .first()
                .and_then(scalar_of)
                .ok_or_else(|| RunError::new(format!("`{name}`: expected a condition")))?;
            if !ok.is_true() {
                let fmt = args.get(1).cloned().unwrap_or(Value::Str(String::new()));
                let text = format_values(&fmt, args.get(2..).unwrap_or(&[]));
                return Err(RunError::new(format!("`R.assert_op` failed: {text}")));
            }
            Ok(Value::unit())
        }
        "relax.run.nonzero" => {
            let t = tensor(args.first().unwrap_or(&Value::Null), name)?;
            let strides = t.strides();
            let hits: Vec<usize> = (0..t.numel()).filter(|&i| t.get(i).is_true()).collect();
            let out = Tensor::zeros(&[t.shape.len() as i64, hits.len() as i64], DataType::INT64);
            for (j, &flat) in hits.iter().enumerate() {
                for (k, (&st, &d)) in strides.iter().zip(&t.shape).enumerate() {
                    let idx = (flat as i64 / st) % d.max(1);
                    out.set(k * hits.len() + j, Scalar::int(DataType::INT64, idx));
                }
            }
            Ok(Value::Tensor(out))
        }
        "relax.run.unique" => crate::unique::unique(args),
        "relax.run.matmul" => {
            arity(name, args, 3)?;
            let a = tensor(&args[0], name)?;
            let b = tensor(&args[1], name)?;
            let out = tensor(&args[2], name)?;
            let r = crate::ops::linalg::matmul(a, b, out.dtype)?;
            if r.shape != out.shape {
                return Err(RunError::new(format!(
                    "`{name}`: the output has shape {}, the product {}",
                    shape_text(&out.shape),
                    shape_text(&r.shape)
                )));
            }
            out.copy_from(&r);
            Ok(Value::unit())
        }
        _ => Err(RunError::new(format!(
            "unknown packed function `{name}` (the interpreter's builtins are listed in docs/runtime.md)"
        ))),
    }
}

/// `AttentionKVCacheLegacy::Append`: grows the backing tensor by doubling along axis 0 and
/// copies `value` after the filled rows.
fn kv_append(c: &mut KvCache, value: &Tensor) -> RunResult<()> {
    if value.dtype != c.data.dtype {
        return Err(RunError::new(format!("KV cache append: dtype {} does not match {}", value.dtype, c.data.dtype)));
    }
    let d = c.data.shape.clone();
    if value.shape.len() != d.len() || value.shape[1..] != d[1..] {
        return Err(RunError::new(format!(
            "KV cache append: shape {} does not match rows of {}",
            shape_text(&value.shape),
            shape_text(&d[1..])
        )));
    }
    let rows = value.shape[0];
    let mut reserved = d[0].max(1);
    while c.fill_count + rows > reserved {
        reserved *= 2;
    }
    if reserved != d[0] {
        let mut nd = d.clone();
        nd[0] = reserved;
        let grown = Tensor::zeros(&nd, c.data.dtype);
        {
            let old = c.data.bytes();
            grown.data.borrow_mut()[..old.len()].copy_from_slice(&old);
        }
        c.data = grown;
    }
    let row_bytes = numel(&d[1..]) * c.data.dtype.bytes() as usize;
    let at = c.data.offset + c.fill_count as usize * row_bytes;
    let bytes = value.bytes();
    c.data.data.borrow_mut()[at..at + bytes.len()].copy_from_slice(&bytes);
    c.fill_count += rows;
    Ok(())
}
