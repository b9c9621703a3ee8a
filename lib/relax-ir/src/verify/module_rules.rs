//! Check 2, the module: unique global names, `global_symbol` attributes that match their
//! global's name, and unresolved globals only in single-function text.

use std::collections::HashMap;

use crate::attrs::{AttrValue, Attrs};
use crate::entities::Global;
use crate::module::{Func, Module, ModuleForm};

use super::error::{Entity, VerifyError};

/// The module-level rules for every live global.
pub(super) fn check_module(m: &Module, out: &mut Vec<VerifyError>) {
    let mut first: HashMap<&str, Global> = HashMap::new();
    for (g, data) in m.live() {
        match first.get(data.name.as_str()) {
            Some(&prev) => out.push(duplicate(g, &data.name, prev)),
            None => {
                first.insert(data.name.as_str(), g);
            }
        }
        check_global(m, g, out);
    }
}

/// The module-level rules for one global (its name compared with every other live one).
pub(super) fn check_one(m: &Module, g: Global, out: &mut Vec<VerifyError>) {
    let Some(data) = m.globals.get(g) else { return };
    if let Some((prev, _)) = m.live().find(|(o, d)| *o != g && d.name == data.name) {
        out.push(duplicate(g, &data.name, prev));
    }
    check_global(m, g, out);
}

fn duplicate(g: Global, name: &str, prev: Global) -> VerifyError {
    VerifyError::new(Some(g), Entity::Function, format!("global `{name}` is defined more than once"))
        .with_note(format!("global names are unique in a module; the first `{name}` is `{prev:?}`"))
}

fn check_global(m: &Module, g: Global, out: &mut Vec<VerifyError>) {
    let Some(data) = m.globals.get(g) else { return };
    let name = data.name.as_str();
    match &data.func {
        Func::Unresolved if m.form == ModuleForm::Module => {
            out.push(
                VerifyError::new(Some(g), Entity::Module, format!("global `{name}` is referenced but never defined"))
                    .with_note("only single-function text may refer to functions defined outside it"),
            );
        }
        Func::Relax(f) => check_symbol(g, name, &f.func.attrs, false, out),
        Func::Prim(f) => {
            let lowered = f.attrs.get("calling_conv").is_some();
            check_symbol(g, name, &f.attrs, lowered, out);
        }
        _ => {}
    }
}

/// A `global_symbol`, when present, is a string equal to the global's name. Lowered
/// PrimFuncs (those with a `calling_conv` attribute) may carry TVM's FFI symbol
/// `__tvm_ffi_<name>` instead.
fn check_symbol(g: Global, name: &str, attrs: &Attrs, lowered: bool, out: &mut Vec<VerifyError>) {
    match attrs.get("global_symbol") {
        None => {}
        Some(AttrValue::Str(s)) if s == name => {}
        Some(AttrValue::Str(s)) if lowered && s.starts_with("__tvm_ffi_") => {}
        Some(AttrValue::Str(s)) => out.push(
            VerifyError::new(
                Some(g),
                Entity::Function,
                format!("expected `global_symbol` of `{name}` to be `{name}`, found `{s}`"),
            )
            .with_note("a function's `global_symbol` equals its global name"),
        ),
        Some(other) => out.push(VerifyError::new(
            Some(g),
            Entity::Function,
            format!("expected `global_symbol` of `{name}` to be a string, found `{other:?}`"),
        )),
    }
}
