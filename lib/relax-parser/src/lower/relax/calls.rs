//! Calls: the `R.` special forms, ops through the op table (with their convenience
//! spellings), DPS and packed calls, and calls of module and local functions.

use relax_ir::attrs::{AttrValue, Attrs, FloatBits};
use relax_ir::op::{self, ArgDflt, ArgKind, AttrKind, Dflt, OpDef, OpRef, ParamRole};
use relax_ir::{Call, DataType, Expr, ExprData, Ty, TyData};

use super::super::attrs::lower_attr_value;
use super::super::prim_expr::lower_prim;
use super::super::{LResult, Reported};
use super::exprs::{self, global_attr, leaf, prim_value};
use super::{FuncCx, infer, tvm_ops, types};
use crate::ast::{self, ExprKind};

/// Lowers a call expression.
pub(crate) fn lower_call(fx: &mut FuncCx<'_, '_>, e: &ast::Expr, call: &ast::Call, ann: Option<Ty>) -> LResult<Expr> {
    if let Some(f) = global_attr(&call.func) {
        let Some(g) = fx.cx.global(f) else {
            return Err(fx.d().error(call.func.span, format!("module has no function `{f}`")));
        };
        return function_call(fx, e, call, FuncRef::Global(g), ann);
    }
    let Some(name) = call.func.dotted_name() else {
        return Err(fx.d().error(call.func.span, "expected a function to call"));
    };
    if let Some(rest) = name.strip_prefix("R.") {
        return r_call(fx, e, call, rest, ann);
    }
    if name.starts_with("T.") {
        let p = lower_prim(fx, e)?;
        return Ok(prim_value(fx, p, e.span));
    }
    match exprs::resolve_callee(fx, &name) {
        Some(exprs::NameRef::Var(v)) => function_call(fx, e, call, FuncRef::Var(v), ann),
        Some(exprs::NameRef::Global(g)) => function_call(fx, e, call, FuncRef::Global(g), ann),
        _ => Err(fx.d().error(call.func.span, format!("undefined function `{name}`"))),
    }
}

enum FuncRef {
    Global(relax_ir::Global),
    Var(relax_ir::Var),
}

fn function_call(
    fx: &mut FuncCx<'_, '_>,
    e: &ast::Expr,
    call: &ast::Call,
    f: FuncRef,
    ann: Option<Ty>,
) -> LResult<Expr> {
    // `sinfo_args=` is how a call that carries result types prints (TVM prints
    // `f(x, sinfo_args=(...))` for such a call of a function value).
    if let Some(k) = call.keywords.iter().find(|k| !is_sinfo_keyword(k)) {
        return Err(fx.d().error(k.span, "Relax functions take positional arguments only"));
    }
    let mut args = Vec::with_capacity(call.args.len());
    for a in &call.args {
        args.push(leaf(fx, a)?);
    }
    let sinfo_args = sinfo_keyword(fx, call)?;
    let callee = match f {
        FuncRef::Global(g) => {
            let ty = infer::global_type(fx, g);
            fx.add(ExprData::Global(g), ty, call.func.span)
        }
        FuncRef::Var(v) => {
            let ty = fx.f.vars[v].ty;
            fx.add(ExprData::Var(v), Some(ty), call.func.span)
        }
    };
    let mut ty = infer::function_call_type(fx, callee, &args, e.span)?;
    // An opaque callee (an `R.ExternFunc` value, whose TVM type derives the result from
    // `sinfo_args`, or a function the text does not show) returns what `sinfo_args` says.
    let opaque = ty.is_none()
        || matches!(fx.f.exprs[callee], ExprData::Var(_))
            && matches!(fx.f.ty_of(callee).map(|t| fx.f.pool.ty(t)), Some(TyData::Callable { params: None, .. }));
    if opaque && !sinfo_args.is_empty() {
        ty = Some(infer::sinfo_result(fx, &sinfo_args));
    }
    let ty = ty.or(ann);
    let args = fx.f.new_list(args);
    let data = ExprData::Call(Call { callee, args, attrs: Attrs::new(), sinfo_args });
    Ok(fx.add(data, ty, e.span))
}

/// Builds `op(args)` with its attributes and inferred type.
pub(crate) fn op_call(
    fx: &mut FuncCx<'_, '_>,
    op: OpRef,
    args: Vec<Expr>,
    attrs: Attrs,
    sinfo_args: Vec<Ty>,
    span: ast::Span,
) -> LResult<Expr> {
    let callee = fx.add(ExprData::Op(op), None, span);
    let args = fx.f.new_list(args);
    let call = Call { callee, args, attrs, sinfo_args };
    let ty = infer::op_call_type(fx, &call, span)?;
    Ok(fx.add(ExprData::Call(call), ty, span))
}

fn r_call(fx: &mut FuncCx<'_, '_>, e: &ast::Expr, call: &ast::Call, rest: &str, ann: Option<Ty>) -> LResult<Expr> {
    match rest {
        "const" => exprs::r_const(fx, e, call),
        "shape" => {
            let [arg] = call.args.as_slice() else {
                return Err(fx.d().error(e.span, "`R.shape` takes one list of dims"));
            };
            let dims = types::dims(fx, arg)?;
            let ty = fx.ty(TyData::shape(dims.clone()));
            Ok(fx.add(ExprData::Shape(dims), Some(ty), e.span))
        }
        "prim_value" => {
            let [arg] = call.args.as_slice() else {
                return Err(fx.d().error(e.span, "`R.prim_value` takes one value"));
            };
            let p = prim_arg(fx, arg)?;
            Ok(prim_value(fx, p, e.span))
        }
        "str" => match call.args.as_slice() {
            [ast::Expr { kind: ExprKind::Str(s), .. }] => {
                let ty = fx.ty(TyData::Object);
                Ok(fx.add(ExprData::Str(s.clone()), Some(ty), e.span))
            }
            _ => Err(fx.d().error(e.span, "`R.str` takes one string")),
        },
        "dtype" => match call.args.as_slice() {
            [a] => {
                let t = types::dtype_value(fx, a)?;
                let ty = fx.ty(TyData::Object);
                Ok(fx.add(ExprData::DType(t), Some(ty), e.span))
            }
            _ => Err(fx.d().error(e.span, "`R.dtype` takes one dtype string")),
        },
        "tuple" => exprs::tuple(fx, &call.args, e.span),
        "ExternFunc" => match call.args.first().and_then(|a| a.as_str()) {
            Some(s) => Ok(extern_func(fx, s, e.span)),
            None => Err(fx.d().error(e.span, "`R.ExternFunc` takes the symbol as a string")),
        },
        "call_tir" | "call_tir_inplace" | "call_tir_with_grad" | "call_dps_packed" => dps_call(fx, e, call, rest),
        "call_packed" => packed_call(fx, e, call),
        "hint_on_device" => hint_on_device(fx, e, call),
        "match_cast" => Err(fx.d().error(e.span, "`R.match_cast` must be the whole value of an annotated binding")),
        "output" | "dataflow" | "func_attr" => Err(fx.d().error(e.span, format!("`R.{rest}` is a statement here"))),
        _ => {
            let full = format!("relax.{rest}");
            match op::lookup(&full) {
                Some(id) => table_call(fx, e, call, id.def(), OpRef::Known(id)),
                None if rest.split('.').all(super::signature::is_identifier) => custom_call(fx, e, call, full, ann),
                None => Err(fx.d().error(call.func.span, format!("unknown op `R.{rest}`"))),
            }
        }
    }
}

/// A TIR scalar for `R.prim_value(...)`: plain integers are int64 in Relax.
fn prim_arg(fx: &mut FuncCx<'_, '_>, arg: &ast::Expr) -> LResult<relax_ir::PrimExpr> {
    if let Some(v) = arg.as_signed_int() {
        return Ok(fx.f.pool.i64(v));
    }
    lower_prim(fx, arg)
}

fn extern_func(fx: &mut FuncCx<'_, '_>, name: &str, span: ast::Span) -> Expr {
    let ret = fx.ty(TyData::Object);
    let ty = fx.ty(TyData::Callable { params: None, ret, pure: false });
    fx.add(ExprData::ExternFunc(name.to_string()), Some(ty), span)
}

/// `sinfo_args=` / `ty_args=`: one type or a tuple of types.
fn sinfo_keyword(fx: &mut FuncCx<'_, '_>, call: &ast::Call) -> LResult<Vec<Ty>> {
    let Some(v) = call.keyword("sinfo_args").or_else(|| call.keyword("ty_args")) else { return Ok(Vec::new()) };
    match &v.kind {
        ExprKind::Tuple { elts, .. } | ExprKind::List(elts) => {
            elts.iter().map(|t| types::lower_type(fx, t, false)).collect()
        }
        _ => Ok(vec![types::lower_type(fx, v, false)?]),
    }
}

fn is_sinfo_keyword(k: &ast::Keyword) -> bool {
    k.name.name == "sinfo_args" || k.name.name == "ty_args"
}

fn dps_call(fx: &mut FuncCx<'_, '_>, e: &ast::Expr, call: &ast::Call, which: &str) -> LResult<Expr> {
    let opid = op::lookup(&format!("relax.{which}")).expect("DPS ops are in the table");
    let get = |i: usize, key: &[&str]| call.args.get(i).or_else(|| key.iter().find_map(|k| call.keyword(k)));
    for k in &call.keywords {
        let known =
            ["out_sinfo", "out_ty", "tir_vars", "inplace_indices", "te_grad_name", "te_grad_kwargs", "func", "args"];
        if !known.contains(&k.name.name.as_str()) {
            return Err(fx.d().error(k.name.span, format!("unexpected keyword `{}` of `R.{which}`", k.name.name)));
        }
    }
    let Some(func) = get(0, &["func"]) else {
        return Err(fx.d().error(e.span, format!("`R.{which}` needs a function")));
    };
    let callee = match &func.kind {
        ExprKind::Str(s) if which == "call_dps_packed" => extern_func(fx, s, func.span),
        _ => exprs::callee_leaf(fx, func)?,
    };
    let args_expr = match get(1, &["args"]) {
        Some(a) => a,
        None => return Err(fx.d().error(e.span, format!("`R.{which}` needs an argument tuple"))),
    };
    let args = match &args_expr.kind {
        ExprKind::Tuple { elts, .. } | ExprKind::List(elts) => exprs::tuple(fx, elts, args_expr.span)?,
        _ => {
            // As in TVM's Python API: a value that is already a tuple (`R.tuple()`, a
            // tuple variable) is the argument tuple; anything else is its only field.
            let value = leaf(fx, args_expr)?;
            match fx.f.ty_of(value).map(|t| fx.f.pool.ty(t)) {
                Some(TyData::Tuple(_)) => value,
                _ => {
                    let ty = super::ty_or_object(fx, value);
                    let ty = fx.ty(TyData::Tuple(vec![ty]));
                    {
                        let l = fx.f.new_list([value]);
                        fx.add(ExprData::Tuple(l), Some(ty), args_expr.span)
                    }
                }
            }
        }
    };
    let Some(out) = get(2, &["out_sinfo", "out_ty"]) else {
        return Err(fx.d().error(e.span, format!("`R.{which}` needs `out_sinfo`")));
    };
    let out_ty = match &out.kind {
        ExprKind::List(items) if items.len() != 1 => {
            let fields = items.iter().map(|t| types::lower_type(fx, t, false)).collect::<LResult<Vec<_>>>()?;
            fx.ty(TyData::Tuple(fields))
        }
        ExprKind::List(items) => types::lower_type(fx, &items[0], false)?,
        _ => types::lower_type(fx, out, false)?,
    };
    let mut relax_args = vec![callee, args];
    if let Some(tv) = get(3, &["tir_vars"]) {
        let shape = match &tv.kind {
            ExprKind::Tuple { .. } | ExprKind::List(_) => {
                let dims = types::dims(fx, tv)?;
                let ty = fx.ty(TyData::shape(dims.clone()));
                fx.add(ExprData::Shape(dims), Some(ty), tv.span)
            }
            ExprKind::None => {
                let attrs = dps_attrs(fx, call, which)?;
                return op_call(fx, OpRef::Known(opid), relax_args, attrs, vec![out_ty], e.span);
            }
            _ => leaf(fx, tv)?,
        };
        relax_args.push(shape);
    }
    let attrs = dps_attrs(fx, call, which)?;
    op_call(fx, OpRef::Known(opid), relax_args, attrs, vec![out_ty], e.span)
}

fn dps_attrs(fx: &mut FuncCx<'_, '_>, call: &ast::Call, which: &str) -> LResult<Attrs> {
    let mut attrs = Attrs::new();
    match which {
        "call_tir_inplace" => {
            let Some(v) = call.keyword("inplace_indices") else {
                return Err(fx.d().error(call.func.span, "`R.call_tir_inplace` needs `inplace_indices`"));
            };
            let v = attr_of_kind(fx, v, AttrKind::IntList, "inplace_indices")?;
            attrs.set("inplace_indices", v);
        }
        "call_tir_with_grad" => {
            for (k, kind) in [("te_grad_name", AttrKind::Str), ("te_grad_kwargs", AttrKind::Any)] {
                if let Some(v) = call.keyword(k) {
                    let v = attr_of_kind(fx, v, kind, k)?;
                    attrs.set(k, v);
                }
            }
        }
        _ => {}
    }
    Ok(attrs)
}

/// `R.call_packed("name", args..., sinfo_args=...)`: a call whose callee is the extern
/// function itself.
fn packed_call(fx: &mut FuncCx<'_, '_>, e: &ast::Expr, call: &ast::Call) -> LResult<Expr> {
    let Some((first, rest)) = call.args.split_first() else {
        return Err(fx.d().error(e.span, "`R.call_packed` needs a function name"));
    };
    // As in TVM, whose `R.call_packed` wraps its first argument in `ExternFunc(name)`.
    let ExprKind::Str(s) = &first.kind else {
        return Err(fx.d().error(first.span, "`R.call_packed` takes the name of the packed function as a string"));
    };
    let callee = extern_func(fx, s, first.span);
    for k in &call.keywords {
        if !is_sinfo_keyword(k) {
            return Err(fx.d().error(k.name.span, format!("unexpected keyword `{}` of `R.call_packed`", k.name.name)));
        }
    }
    let mut args = Vec::with_capacity(rest.len());
    for a in rest {
        args.push(leaf(fx, a)?);
    }
    let sinfo_args = sinfo_keyword(fx, call)?;
    let ty = Some(infer::sinfo_result(fx, &sinfo_args));
    let args = fx.f.new_list(args);
    let data = ExprData::Call(Call { callee, args, attrs: Attrs::new(), sinfo_args });
    Ok(fx.add(data, ty, e.span))
}

/// `R.hint_on_device(x, R.device(device_type=2, index=0), "global")`: the device and the
/// memory scope are the op's attributes (`R.device(2, 0)` and `memory_scope=` also work).
fn hint_on_device(fx: &mut FuncCx<'_, '_>, e: &ast::Expr, call: &ast::Call) -> LResult<Expr> {
    let data = call.args.first().or_else(|| call.keyword("data"));
    let device = call.args.get(1).or_else(|| call.keyword("dst_vdevice"));
    let (Some(data), Some(device)) = (data, device) else {
        return Err(fx.d().error(e.span, "`R.hint_on_device` takes a value and `R.device(...)`"));
    };
    let dev = device.as_call().filter(|c| c.func.is_dotted("R.device"));
    let int_of =
        |c: &ast::Call, i: usize, k: &str| c.args.get(i).or_else(|| c.keyword(k)).and_then(|a| a.as_signed_int());
    let Some((device_type, index)) = dev.and_then(|c| Some((int_of(c, 0, "device_type")?, int_of(c, 1, "index")?)))
    else {
        return Err(fx.d().error(device.span, "expected `R.device(device_type=..., index=...)`"));
    };
    let scope = match call.args.get(2).or_else(|| call.keyword("memory_scope")) {
        Some(a) => match a.as_str() {
            Some(s) => s.to_string(),
            None => return Err(fx.d().error(a.span, "expected the memory scope as a string")),
        },
        None => "global".to_string(),
    };
    let value = leaf(fx, data)?;
    let mut attrs = Attrs::new();
    attrs.set("device_type", AttrValue::Int(device_type));
    attrs.set("index", AttrValue::Int(index));
    attrs.set("memory_scope", AttrValue::Str(scope));
    let op = OpRef::Known(relax_ir::ops::HINT_ON_DEVICE);
    op_call(fx, op, vec![value], attrs, Vec::new(), e.span)
}

/// An op the table does not know: arguments and keywords are kept as written.
fn custom_call(
    fx: &mut FuncCx<'_, '_>,
    e: &ast::Expr,
    call: &ast::Call,
    name: String,
    ann: Option<Ty>,
) -> LResult<Expr> {
    let mut args = Vec::with_capacity(call.args.len());
    for a in &call.args {
        args.push(leaf(fx, a)?);
    }
    let mut attrs = Attrs::new();
    for k in &call.keywords {
        if is_sinfo_keyword(k) {
            continue;
        }
        let v = lower_attr_value(fx.cx.diags, &k.value)?;
        attrs.0.push((k.name.name.clone(), v));
    }
    let sinfo_args = sinfo_keyword(fx, call)?;
    let op_name = name.trim_start_matches("relax.");
    if !tvm_ops::is_tvm_op(op_name) {
        // TVM's parser rejects it too: `R.foo` is not in its `R` namespace.
        let mut d = relax_ir::Diagnostic::error(super::super::sp(call.func.span), format!("unknown op `R.{op_name}`"))
            .with_label("TVM registers no such op");
        let table = op::OPS.iter().map(|d| d.name.trim_start_matches("relax."));
        if let Some(s) = tvm_ops::suggest(op_name, table) {
            d = d.with_note(format!("did you mean `R.{s}`?"));
        }
        return Err(fx.d().push(d));
    }
    if ann.is_none() && sinfo_args.is_empty() {
        // An op of TVM that the op table does not model: nothing says what it returns.
        let d = relax_ir::Diagnostic::error(
            super::super::sp(call.func.span),
            format!("op `R.{op_name}` is not in the op table, so its result type is unknown"),
        )
        .with_label("not in the op table")
        .with_note("an op outside the op table needs a type annotation on its binding (or `sinfo_args=`)");
        return Err(fx.d().push(d));
    }
    let callee = fx.add(ExprData::Op(OpRef::Custom(name)), None, call.func.span);
    let ty = if sinfo_args.is_empty() { ann } else { Some(infer::sinfo_result(fx, &sinfo_args)) };
    let args = fx.f.new_list(args);
    let data = ExprData::Call(Call { callee, args, attrs, sinfo_args });
    Ok(fx.add(data, ty, e.span))
}

/// An op of the table: positional and keyword arguments are matched to its parameters,
/// convenience spellings are normalised and defaults filled in.
fn table_call(
    fx: &mut FuncCx<'_, '_>,
    e: &ast::Expr,
    call: &ast::Call,
    def: &'static OpDef,
    op: OpRef,
) -> LResult<Expr> {
    let n = def.params.len();
    let mut slots: Vec<Vec<&ast::Expr>> = vec![Vec::new(); n];
    let mut positional = call.args.iter();
    for (i, p) in def.params.iter().enumerate() {
        match p.role {
            ParamRole::Arg { kind: ArgKind::FormatStr, .. } => {}
            ParamRole::Arg { kind: ArgKind::Variadic, .. } => slots[i].extend(positional.by_ref()),
            _ => {
                if let Some(a) = positional.next() {
                    slots[i].push(a);
                }
            }
        }
    }
    if let Some(extra) = positional.next() {
        return Err(fx.d().error(extra.span, format!("too many arguments for `R.{}`", def.text_name())));
    }
    // Keywords the table does not list are errors, except the attributes of a TVM
    // release newer than the table's (`op::newer_attrs`), kept as written after the
    // table's attributes.
    let mut extra = Vec::new();
    for k in &call.keywords {
        if is_sinfo_keyword(k) {
            continue;
        }
        let Some(i) = def.params.iter().position(|p| p.name == k.name.name) else {
            let newer = op.id().map_or(&[][..], op::newer_attrs);
            if !newer.contains(&k.name.name.as_str()) {
                return Err(unknown_keyword(fx, def, newer, &k.name));
            }
            if extra.iter().any(|(n, _): &(String, AttrValue)| *n == k.name.name) {
                return Err(fx.d().error(k.name.span, format!("parameter `{}` is given twice", k.name.name)));
            }
            extra.push((k.name.name.clone(), lower_attr_value(fx.cx.diags, &k.value)?));
            continue;
        };
        if !slots[i].is_empty() {
            return Err(fx.d().error(k.name.span, format!("parameter `{}` is given twice", k.name.name)));
        }
        slots[i].push(&k.value);
    }
    let mut args = Vec::new();
    // Where each argument parameter's value went in `args` (for the defaults that refer to
    // an earlier argument).
    let mut arg_at: Vec<(&str, usize)> = Vec::new();
    let mut attrs = Attrs::new();
    for (i, p) in def.params.iter().enumerate() {
        match p.role {
            ParamRole::Arg { kind: ArgKind::Variadic, .. } => {
                for a in &slots[i] {
                    args.push(leaf(fx, a)?);
                }
            }
            ParamRole::Arg { kind, optional, default } => match (slots[i].first(), default) {
                (Some(a), _) if !(optional && matches!(a.kind, ExprKind::None)) => {
                    arg_at.push((p.name, args.len()));
                    // The function of `R.make_closure(func, ...)` is a callee position.
                    let v = if p.name == "func" && kind == ArgKind::Expr {
                        exprs::callee_leaf(fx, a)?
                    } else {
                        coerce_arg(fx, a, kind)?
                    };
                    args.push(v);
                }
                _ if optional => {}
                (None, Some(d)) => {
                    let v = arg_default(fx, d, &arg_at, &mut args, e.span);
                    arg_at.push((p.name, args.len()));
                    args.push(v);
                }
                _ if kind == ArgKind::FormatStr => {
                    let ty = fx.ty(TyData::Object);
                    args.push(fx.add(ExprData::Str(String::new()), Some(ty), e.span));
                }
                _ => {
                    return Err(fx
                        .d()
                        .error(e.span, format!("`R.{}` is missing its argument `{}`", def.text_name(), p.name)));
                }
            },
            ParamRole::Attr { kind, default } => {
                let v = match slots[i].first() {
                    // An attribute whose default is `None` takes `None` whatever its kind:
                    // that is how an omitted one prints.
                    Some(a) if default == Dflt::None && matches!(a.kind, ExprKind::None) => AttrValue::None,
                    Some(a) => attr_of_kind(fx, a, kind, p.name)?,
                    None => match default {
                        Dflt::Required => {
                            return Err(fx.d().error(
                                e.span,
                                format!("`R.{}` is missing its attribute `{}`", def.text_name(), p.name),
                            ));
                        }
                        Dflt::SameAs(other) => attrs.get(other).cloned().unwrap_or(AttrValue::None),
                        d => d.value().unwrap_or(AttrValue::None),
                    },
                };
                // The form TVM's constructor stores (`strides=2` → `[2, 2]` for conv2d).
                let v = match kind.complete(v) {
                    Ok(v) => v,
                    Err(what) => {
                        let span = slots[i].first().map_or(e.span, |a| a.span);
                        return Err(fx.d().error(span, format!("`{}` expects {what}", p.name)));
                    }
                };
                attrs.0.push((p.name.to_string(), v));
            }
        }
    }
    attrs.0.extend(extra);
    // What TVM's Python constructor resolves (`-1` in a reshape, arange's dtype).
    if let Some(id) = op.id() {
        relax_ir::infer::apply_python_conveniences(fx.f, id, &mut args, &mut attrs);
    }
    let sinfo_args = sinfo_keyword(fx, call)?;
    op_call(fx, op, args, attrs, sinfo_args, e.span)
}

/// A keyword that is neither a parameter of the op `def` nor one of its `newer`
/// attributes: an error naming both, with a did-you-mean among the op's keywords.
fn unknown_keyword(fx: &mut FuncCx<'_, '_>, def: &OpDef, newer: &[&'static str], k: &ast::Ident) -> Reported {
    let op_name = def.text_name();
    let mut d = relax_ir::Diagnostic::error(
        super::super::sp(k.span),
        format!("unknown keyword argument `{}` of `R.{op_name}`", k.name),
    )
    .with_label("not a parameter of this op");
    let names = def.params.iter().map(|p| p.name).chain(newer.iter().copied());
    if let Some(s) = relax_ir::diag::suggest(&k.name, names) {
        d = d.with_note(format!("did you mean `{s}`?"));
    } else {
        let all: Vec<String> = def.params.iter().map(|p| format!("`{}`", p.name)).collect();
        d = d.with_note(format!(
            "`R.{op_name}` takes {}",
            if all.is_empty() { "no parameters".to_string() } else { all.join(", ") }
        ));
    }
    fx.d().push(d)
}

/// The value of a Relax argument left out of the text, as TVM's Python wrapper fills it in.
/// `arg_at` says where the earlier arguments are in `args` (the table only names earlier
/// ones; a name not found falls back to the plain value).
fn arg_default(
    fx: &mut FuncCx<'_, '_>,
    default: ArgDflt,
    arg_at: &[(&str, usize)],
    args: &mut [Expr],
    span: ast::Span,
) -> Expr {
    let at = |name: &str| arg_at.iter().find(|(n, _)| *n == name).map(|&(_, i)| i);
    let int = |fx: &mut FuncCx<'_, '_>, v: i64| {
        let p = fx.f.pool.i64(v);
        prim_value(fx, p, span)
    };
    match default {
        ArgDflt::Prim(v) => int(fx, v),
        ArgDflt::SameAs(name) | ArgDflt::TakeFrom(name, _) => {
            let Some(i) = at(name) else { return int(fx, 0) };
            // The arguments are leaves: a copy of the node is the same value.
            let src = args[i];
            let copy = fx.f.exprs[src].clone();
            let ty = fx.f.expr_ty[src];
            let v = fx.add(copy, ty, span);
            if let ArgDflt::TakeFrom(_, replacement) = default {
                args[i] = int(fx, replacement);
            }
            v
        }
    }
}

/// A Relax argument written in a convenience spelling.
fn coerce_arg(fx: &mut FuncCx<'_, '_>, a: &ast::Expr, kind: ArgKind) -> LResult<Expr> {
    match (kind, &a.kind) {
        (ArgKind::TensorTuple, ExprKind::Tuple { elts, .. } | ExprKind::List(elts)) => exprs::tuple(fx, elts, a.span),
        (ArgKind::ShapeOfRank(n), _)
            if a.as_signed_int().is_some() || a.as_sequence().is_some_and(|s| s.len() == 1) =>
        {
            let one = a.as_sequence().map_or(a, |s| &s[0]);
            let d = types::dim(fx, one)?;
            let dims = vec![d; usize::from(n)];
            let ty = fx.ty(TyData::shape(dims.clone()));
            Ok(fx.add(ExprData::Shape(dims), Some(ty), a.span))
        }
        (ArgKind::Shape | ArgKind::ShapeOfRank(_), ExprKind::Tuple { .. } | ExprKind::List(_)) => {
            let dims = types::dims(fx, a)?;
            let ty = fx.ty(TyData::shape(dims.clone()));
            Ok(fx.add(ExprData::Shape(dims), Some(ty), a.span))
        }
        (ArgKind::PrimValueTuple, ExprKind::Tuple { elts, .. } | ExprKind::List(elts)) => {
            exprs::tuple(fx, elts, a.span)
        }
        (ArgKind::PrimValueTuple, _) if a.as_signed_int().is_some() => {
            exprs::tuple(fx, std::slice::from_ref(a), a.span)
        }
        // TVM's Python wrappers build `PrimValue(True)`, an int64 (a Python bool is an
        // int). (`R.prim_value(True)` stays a bool: it is how TVM prints `T.bool(True)`.)
        (ArgKind::PrimValue, ExprKind::Bool(b)) => {
            let p = fx.f.pool.i64(i64::from(*b));
            Ok(prim_value(fx, p, a.span))
        }
        (ArgKind::Callee, ExprKind::Str(s)) => Ok(extern_func(fx, s, a.span)),
        (ArgKind::Callee, _) => exprs::callee_leaf(fx, a),
        (ArgKind::Str | ArgKind::FormatStr, ExprKind::Str(s)) => {
            let ty = fx.ty(TyData::Object);
            Ok(fx.add(ExprData::Str(s.clone()), Some(ty), a.span))
        }
        (ArgKind::DType, ExprKind::Str(_) | ExprKind::None) => {
            let t = types::dtype_value(fx, a)?;
            let ty = fx.ty(TyData::Object);
            Ok(fx.add(ExprData::DType(t), Some(ty), a.span))
        }
        _ => leaf(fx, a),
    }
}

/// An attribute value normalised to its kind.
pub(crate) fn attr_of_kind(fx: &mut FuncCx<'_, '_>, a: &ast::Expr, kind: AttrKind, name: &str) -> LResult<AttrValue> {
    let v = lower_attr_value(fx.cx.diags, a)?;
    let bad = |fx: &mut FuncCx<'_, '_>, what: &str| -> Reported {
        fx.d().error(a.span, format!("expected {what} for `{name}`, found {}", a.describe()))
    };
    let int_list =
        |v: &AttrValue| v.as_int_list().map(|l| AttrValue::List(l.into_iter().map(AttrValue::Int).collect()));
    Ok(match kind {
        AttrKind::Int => match v.as_int() {
            Some(i) if !matches!(v, AttrValue::Bool(_)) => AttrValue::Int(i),
            _ => return Err(bad(fx, "an integer")),
        },
        AttrKind::OptInt => match v {
            AttrValue::None => AttrValue::None,
            AttrValue::Int(i) | AttrValue::PrimInt(_, i) => AttrValue::Int(i),
            _ => return Err(bad(fx, "an integer or `None`")),
        },
        AttrKind::IntList
        | AttrKind::OptIntList
        | AttrKind::Spatial(_)
        | AttrKind::OptSpatial(_)
        | AttrKind::Padding(_) => match v {
            AttrValue::None if matches!(kind, AttrKind::OptIntList | AttrKind::OptSpatial(_)) => AttrValue::None,
            AttrValue::Int(i) | AttrValue::PrimInt(_, i) => AttrValue::List(vec![AttrValue::Int(i)]),
            ref l @ AttrValue::List(_) => match int_list(l) {
                Some(l) => l,
                None => return Err(bad(fx, "a list of integers")),
            },
            _ => return Err(bad(fx, "a list of integers")),
        },
        AttrKind::IntOrIntList => match v {
            AttrValue::Int(i) | AttrValue::PrimInt(_, i) => AttrValue::Int(i),
            ref l @ AttrValue::List(_) => match int_list(l) {
                Some(l) => l,
                None => return Err(bad(fx, "an integer or a list of integers")),
            },
            _ => return Err(bad(fx, "an integer or a list of integers")),
        },
        AttrKind::Float => match v.as_f64() {
            Some(f) if !matches!(v, AttrValue::Bool(_)) => AttrValue::Float(FloatBits::new(f)),
            _ => return Err(bad(fx, "a number")),
        },
        AttrKind::OptPrimFloat => match v {
            AttrValue::None => AttrValue::None,
            AttrValue::PrimFloat(t, f) => AttrValue::PrimFloat(t, f),
            AttrValue::Float(f) => AttrValue::PrimFloat(DataType::FLOAT32, f),
            AttrValue::Int(i) => AttrValue::PrimFloat(DataType::FLOAT32, FloatBits::new(i as f64)),
            _ => return Err(bad(fx, "a float or `None`")),
        },
        AttrKind::Bool => match v {
            AttrValue::Bool(b) => AttrValue::Bool(b),
            _ => return Err(bad(fx, "`True` or `False`")),
        },
        AttrKind::Str => match v {
            AttrValue::Str(s) => AttrValue::Str(s),
            _ => return Err(bad(fx, "a string")),
        },
        AttrKind::OptStr => match v {
            AttrValue::None | AttrValue::Str(_) => v,
            _ => return Err(bad(fx, "a string or `None`")),
        },
        AttrKind::DType => match v {
            AttrValue::None => AttrValue::Str("void".into()),
            AttrValue::Str(ref s) if DataType::parse(s).is_some() => v,
            AttrValue::Str(s) => return Err(fx.d().error(a.span, format!("unknown dtype `{s}`"))),
            _ => return Err(bad(fx, "a dtype string")),
        },
        AttrKind::Roi(_) | AttrKind::Any => v,
    })
}
