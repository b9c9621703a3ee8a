//! Phase 1 and the driver of phase 2: the file's top level and the class body.
//!
//! Accepted top levels: an `@I.ir_module` class (any class name; `@tvm.script.ir_module`
//! too), optionally preceded by HEAD `n = TypeVar("n")` lines and imports; or single
//! functions at column 0 (`Function.script()` text), whose bare callee names become
//! unresolved globals.

use std::collections::HashMap;

use relax_ir::attrs::{AttrValue, Attrs};
use relax_ir::{ExternFunc, Func, Global, Module, ModuleForm, Pool, RelaxFunction, VDeviceInfo};

use super::attrs::{lower_attr_dict, lower_attr_value};
use super::dialect::{Dialect, typevar_decl};
use super::metadata::MetadataTable;
use super::{Diags, LResult, sp};
use crate::ast::{self, ExprKind, StmtKind};

/// What the decorator of a function says.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Decorator {
    /// `@R.function` (else `@T.prim_func`).
    pub relax: bool,
    /// `private=True`.
    pub private: bool,
    /// `pure=False` was given.
    pub impure: bool,
    /// `s_tir=True`.
    pub s_tir: bool,
    /// `s_tir` was written at all (classic text omits it).
    pub s_tir_given: bool,
    /// `persistent=True`.
    pub persistent: bool,
}

/// Module-wide state of lowering.
pub(crate) struct ModuleCx<'d> {
    /// Diagnostics.
    pub diags: &'d mut Diags,
    /// Dialect hints.
    pub dialect: Dialect,
    /// The module being built.
    pub module: Module,
    /// Constant data lines.
    pub metadata: MetadataTable,
    /// Constants already created for `(key, index)` references.
    pub constants: HashMap<(String, u32), relax_ir::Constant>,
    /// Signatures of Relax functions (the shells built in phase 1, bodies empty), for
    /// deriving the types of calls.
    pub signatures: HashMap<Global, RelaxFunction>,
    /// The globals by name (`Module::lookup` is a linear scan; a module may have
    /// thousands of functions).
    pub names: HashMap<String, Global>,
}

impl ModuleCx<'_> {
    /// The global named `name`, creating an unresolved one in single-function text.
    pub fn global(&mut self, name: &str) -> Option<Global> {
        if let Some(g) = self.lookup(name) {
            return Some(g);
        }
        if self.module.form == ModuleForm::SingleFunction {
            return Some(self.add(name, Func::Unresolved));
        }
        None
    }
    /// The global named `name`.
    pub fn lookup(&self, name: &str) -> Option<Global> {
        self.names.get(name).copied()
    }
    /// Adds a function to the module.
    pub fn add(&mut self, name: &str, func: Func) -> Global {
        let g = self.module.add(name, func);
        self.names.insert(name.to_string(), g);
        g
    }
}

/// Lowers the whole file.
pub(crate) fn lower_module(file: &ast::File, diags: &mut Diags) -> Option<Module> {
    let mut dialect = Dialect::from_header(&file.header);
    let mut metadata = MetadataTable::read(&file.metadata, diags);
    let mut class: Option<&ast::ClassDef> = None;
    let mut funcs: Vec<&ast::FunctionDef> = Vec::new();
    for stmt in &file.body {
        if let Some(name) = typevar_decl(stmt) {
            dialect.typevars.push(name.to_string());
            continue;
        }
        match &stmt.kind {
            StmtKind::Import { .. } | StmtKind::Pass => {}
            StmtKind::ClassDef(c) => {
                if class.is_some() || !funcs.is_empty() {
                    diags.error(c.name.span, "a file holds one module");
                    continue;
                }
                class = Some(c);
            }
            StmtKind::FunctionDef(f) => {
                if class.is_some() {
                    diags.error(f.name.span, "a file holds one module");
                    continue;
                }
                funcs.push(f);
            }
            StmtKind::Expr(e) if matches!(e.kind, ExprKind::Str(_)) => {}
            _ => match load_json_preamble(stmt) {
                Some((text, span)) => match super::metadata_json::read_load_json(text) {
                    Ok(entries) => entries.into_iter().for_each(|(k, i, d)| metadata.insert(k, i, d)),
                    Err(msg) => {
                        diags.error(span, format!("cannot read the metadata: {msg}"));
                    }
                },
                None => {
                    diags.error(stmt.span, "expected an `@I.ir_module` class or a function");
                }
            },
        }
    }
    let mut cx = ModuleCx {
        diags,
        dialect,
        module: Module::new(),
        metadata,
        constants: HashMap::new(),
        signatures: HashMap::new(),
        names: HashMap::new(),
    };
    let members: Vec<&ast::Stmt>;
    if let Some(c) = class {
        check_class_decorators(&mut cx, c);
        cx.module.span = sp(c.name.span);
        members = c.body.iter().collect();
    } else {
        cx.module.form = ModuleForm::SingleFunction;
        members = file.body.iter().filter(|s| matches!(s.kind, StmtKind::FunctionDef(_))).collect();
        if members.is_empty() {
            // An empty file (or one with only comments) is an empty module.
            cx.module.form = ModuleForm::Module;
        }
    }

    // Phase 1: members, names and signatures.
    let mut bodies: Vec<(Global, &ast::FunctionDef, Decorator)> = Vec::new();
    for stmt in members {
        if cx.diags.full() {
            break;
        }
        match &stmt.kind {
            StmtKind::FunctionDef(f) => {
                let Ok(deco) = read_decorator(&mut cx, f) else { continue };
                if cx.lookup(&f.name.name).is_some() {
                    cx.diags.error(f.name.span, format!("function `{}` is defined twice", f.name.name));
                    continue;
                }
                if deco.relax {
                    match super::relax::lower_signature(&mut cx, f, &deco) {
                        Ok(func) => {
                            let g = cx.add(&f.name.name, Func::Relax(Box::new(func.clone())));
                            cx.signatures.insert(g, func);
                            bodies.push((g, f, deco));
                        }
                        Err(_) => continue,
                    }
                } else {
                    let g = cx.add(&f.name.name, Func::Unresolved);
                    bodies.push((g, f, deco));
                }
            }
            StmtKind::Expr(e) => {
                let _ = module_call(&mut cx, e);
            }
            StmtKind::Assign { targets, annotation: None, value } if targets.len() == 1 => {
                let _ = extern_member(&mut cx, &targets[0], value);
            }
            StmtKind::Pass => {}
            _ => {
                cx.diags.error(
                    stmt.span,
                    "expected a function, `R.ExternFunc`, `I.module_attrs` or `I.module_global_infos`",
                );
            }
        }
    }

    // Phase 2: bodies in file order.
    for (g, f, deco) in bodies {
        if cx.diags.full() {
            break;
        }
        if deco.relax {
            let Some(Func::Relax(shell)) =
                cx.module.globals.get_mut(g).map(|gd| std::mem::replace(&mut gd.func, Func::Unresolved))
            else {
                continue;
            };
            let mut func = *shell;
            // Errors are already reported; the function goes back either way.
            let _ = super::relax::lower_body(&mut cx, f, &mut func);
            cx.module.globals[g].func = Func::Relax(Box::new(func));
        } else if let Ok(pf) = super::tir::lower_prim_func(&mut cx, f, &deco) {
            cx.module.globals[g].func = Func::Prim(Box::new(pf));
        }
    }
    if cx.diags.has_errors() { None } else { Some(cx.module) }
}

fn check_class_decorators(cx: &mut ModuleCx<'_>, c: &ast::ClassDef) {
    let ok = c.decorators.iter().any(|d| {
        let target = d.as_call().map_or(d, |call| &call.func);
        target.is_dotted("I.ir_module") || target.is_dotted("tvm.script.ir_module") || target.is_dotted("ir_module")
    });
    if !ok {
        cx.diags.error(c.name.span, "expected `@I.ir_module` on the module class");
    }
}

/// Reads `@R.function(...)` or `@T.prim_func(...)`.
fn read_decorator(cx: &mut ModuleCx<'_>, f: &ast::FunctionDef) -> LResult<Decorator> {
    let mut deco = Decorator::default();
    let mut found = false;
    for d in &f.decorators {
        let (target, keywords): (&ast::Expr, &[ast::Keyword]) = match d.as_call() {
            Some(call) => {
                if !call.args.is_empty() {
                    return Err(cx.diags.error(call.args[0].span, "decorator arguments must be keywords"));
                }
                (&call.func, &call.keywords)
            }
            None => (d, &[]),
        };
        if target.is_dotted("R.function") {
            deco.relax = true;
        } else if target.is_dotted("T.prim_func") {
            deco.relax = false;
        } else {
            return Err(cx.diags.error(d.span, "expected `@R.function` or `@T.prim_func`"));
        }
        found = true;
        for k in keywords {
            let value = match &k.value.kind {
                ExprKind::Bool(b) => *b,
                _ => return Err(cx.diags.error(k.value.span, "expected `True` or `False`")),
            };
            match (deco.relax, k.name.name.as_str()) {
                (_, "private") => deco.private = value,
                (_, "check_well_formed") => {}
                (true, "pure") => deco.impure = !value,
                (false, "s_tir") => {
                    deco.s_tir = value;
                    deco.s_tir_given = true;
                }
                (false, "persistent") => deco.persistent = value,
                (_, other) => {
                    return Err(cx.diags.error(k.name.span, format!("unknown decorator argument `{other}`")));
                }
            }
        }
    }
    if !found {
        return Err(cx
            .diags
            .error(f.name.span, format!("function `{}` needs `@R.function` or `@T.prim_func`", f.name.name)));
    }
    Ok(deco)
}

/// `I.module_attrs({...})` and `I.module_global_infos({...})`.
fn module_call(cx: &mut ModuleCx<'_>, e: &ast::Expr) -> LResult<()> {
    let Some((call, name)) = e.as_dotted_call() else {
        return Err(cx.diags.error(e.span, "expected a module-level call"));
    };
    match name.as_str() {
        "I.module_attrs" => {
            let [arg] = call.args.as_slice() else {
                return Err(cx.diags.error(e.span, "`I.module_attrs` takes one dict"));
            };
            let attrs = lower_attr_dict(cx.diags, arg)?;
            cx.module.attrs = attrs;
            Ok(())
        }
        "I.module_global_infos" => {
            let [ast::Expr { kind: ExprKind::Dict(pairs), .. }] = call.args.as_slice() else {
                return Err(cx.diags.error(e.span, "`I.module_global_infos` takes one dict"));
            };
            for (k, v) in pairs {
                if k.as_str() != Some("vdevice") {
                    return Err(cx.diags.error(k.span, "only `vdevice` global infos are supported"));
                }
                let Some(items) = v.as_sequence() else {
                    return Err(cx.diags.error(v.span, "expected a list of `I.vdevice(...)`"));
                };
                for item in items {
                    let info = vdevice(cx, item)?;
                    cx.module.vdevices.push(info);
                }
            }
            Ok(())
        }
        _ => Err(cx.diags.error(e.span, format!("unexpected `{name}` in the module body"))),
    }
}

fn vdevice(cx: &mut ModuleCx<'_>, e: &ast::Expr) -> LResult<VDeviceInfo> {
    let Some((call, name)) = e.as_dotted_call() else {
        return Err(cx.diags.error(e.span, "expected `I.vdevice(...)`"));
    };
    if name != "I.vdevice" {
        return Err(cx.diags.error(e.span, "expected `I.vdevice(...)`"));
    }
    let get = |i: usize, key: &str| call.args.get(i).or_else(|| call.keyword(key));
    let target = match get(0, "target") {
        Some(t) => lower_attr_value(cx.diags, t)?,
        None => return Err(cx.diags.error(e.span, "`I.vdevice` needs a target")),
    };
    let vdevice_id = match get(1, "vdevice_id") {
        Some(v) => v.as_signed_int().ok_or_else(|| cx.diags.error(v.span, "expected an integer"))?,
        None => 0,
    };
    let scope = match get(2, "memory_scope") {
        Some(v) => v.as_str().map(str::to_string).ok_or_else(|| cx.diags.error(v.span, "expected a string"))?,
        None => "global".to_string(),
    };
    let target = match target {
        AttrValue::Target(t) => *t,
        other => other,
    };
    Ok(VDeviceInfo { target, vdevice_id, scope })
}

/// `name = R.ExternFunc("symbol")` (optionally with a type as second argument).
fn extern_member(cx: &mut ModuleCx<'_>, target: &ast::Expr, value: &ast::Expr) -> LResult<()> {
    let Some(name) = target.as_name() else {
        return Err(cx.diags.error(target.span, "expected a name"));
    };
    let Some((call, callee)) = value.as_dotted_call() else {
        return Err(cx.diags.error(value.span, "expected `R.ExternFunc(\"symbol\")`"));
    };
    if callee != "R.ExternFunc" {
        return Err(cx.diags.error(value.span, "expected `R.ExternFunc(\"symbol\")`"));
    }
    let Some(symbol) = call.args.first().and_then(|a| a.as_str()) else {
        return Err(cx.diags.error(value.span, "`R.ExternFunc` takes the symbol name as a string"));
    };
    let mut pool = Pool::new();
    let ty = match call.args.get(1).or_else(|| call.keyword("struct_info")) {
        Some(t) => Some(super::relax::types::lower_standalone_type(cx, &mut pool, t)?),
        None => None,
    };
    if cx.lookup(name).is_some() {
        return Err(cx.diags.error(target.span, format!("`{name}` is defined twice")));
    }
    cx.add(name, Func::Extern(ExternFunc { symbol: symbol.to_string(), pool, ty }));
    Ok(())
}

/// Attributes of the decorator that are stored as function attributes.
pub(crate) fn decorator_attrs(name: &str, deco: &Decorator, attrs: &mut Attrs) {
    if !deco.private && attrs.get("global_symbol").is_none() {
        attrs.0.insert(0, ("global_symbol".to_string(), AttrValue::Str(name.to_string())));
    }
}

/// TVM's `show_meta=True` preamble `metadata = tvm.ir.load_json("""...""")`: the JSON text
/// and its span.
fn load_json_preamble(stmt: &ast::Stmt) -> Option<(&str, ast::Span)> {
    let StmtKind::Assign { targets, annotation: None, value } = &stmt.kind else { return None };
    let [t] = targets.as_slice() else { return None };
    let (call, callee) = value.as_dotted_call()?;
    if t.as_name() != Some("metadata") || callee != "tvm.ir.load_json" || !call.keywords.is_empty() {
        return None;
    }
    let [arg] = call.args.as_slice() else { return None };
    Some((arg.as_str()?, arg.span))
}
