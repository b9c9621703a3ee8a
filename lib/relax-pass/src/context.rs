//! What a pass sees while it runs: [`PassContext`] (shared by one pipeline run) and, for
//! function passes, [`FunctionContext`] (the rest of the module, read-only).
//!
//! **A function is out of the module while its pass runs.** [`run_on_relax_function`] and
//! [`run_on_prim_func`] (which the pass manager uses) move the function out of its slot,
//! leaving `Func::Unresolved` there, hand the pass `&mut` to it and a
//! [`FunctionContext`] over the module, and put it back afterwards, whatever the pass
//! returned. Nothing is cloned. ([`with_relax_function`] / [`with_prim_func`] do the
//! same for module passes that edit one function while reading the module.) So, during the run, looking the function itself up in
//! [`FunctionContext::module`] finds its global with its name (`lookup`, `globals[g].name`)
//! but no body: `relax(g)` / `prim_func(g)` are `None`. For type inference this means a
//! call of the function from itself keeps the type it has (`relax_ir::infer` types a
//! call of an unresolved global by its existing type), where calls of other functions
//! are typed against their signatures.

use relax_ir::diag::Diagnostic;
use relax_ir::{Func, Global, Module, PrimFunc, RelaxFunction};

use crate::pass::{PassResult, PrimFuncPass, RelaxFunctionPass};

/// State shared by the passes of one pipeline run.
#[derive(Debug, Default)]
pub struct PassContext {
    /// Optimization remarks and warnings emitted by passes (not errors).
    pub remarks: Vec<Diagnostic>,
    /// Names of passes (`fuse-ops`) whose remarks were requested (`--remarks=NAME`).
    pub remarks_enabled: Vec<String>,
}

impl PassContext {
    /// True when remarks of `pass` were requested.
    pub fn wants_remarks(&self, pass: &str) -> bool {
        self.remarks_enabled.iter().any(|p| p == pass || p == "all")
    }
}

/// What a function pass sees besides its function: the module (without the function,
/// see the [module documentation](self)), which function it is, and the remark switches
/// and remark list of the [`PassContext`]. Mutable only to emit remarks.
#[derive(Debug)]
pub struct FunctionContext<'a> {
    module: &'a Module,
    global: Global,
    pass_cx: &'a mut PassContext,
}

impl<'a> FunctionContext<'a> {
    /// The context of the function `global` of `module`, whose slot is empty while the
    /// pass runs.
    pub fn new(module: &'a Module, global: Global, pass_cx: &'a mut PassContext) -> FunctionContext<'a> {
        FunctionContext { module, global, pass_cx }
    }
    /// The module, for reading the other functions, the constants and the attributes.
    pub fn module(&self) -> &'a Module {
        self.module
    }
    /// The global of the function the pass runs on.
    pub fn global(&self) -> Global {
        self.global
    }
    /// The name of the function the pass runs on (empty for a global out of range).
    pub fn name(&self) -> &'a str {
        self.module.globals.get(self.global).map_or("", |g| g.name.as_str())
    }
    /// True when remarks of `pass` were requested ([`PassContext::wants_remarks`]).
    pub fn wants_remarks(&self, pass: &str) -> bool {
        self.pass_cx.wants_remarks(pass)
    }
    /// Emits a remark or warning (not an error: errors are the pass's result).
    pub fn emit(&mut self, d: Diagnostic) {
        self.pass_cx.remarks.push(d);
    }
}

/// Runs a Relax function pass on the function `g` of `m`, which is taken out of its slot
/// for the run (see the [module documentation](self)). `Ok(false)` when `g` is not a
/// Relax function.
pub fn run_on_relax_function(
    pass: &dyn RelaxFunctionPass,
    m: &mut Module,
    g: Global,
    cx: &mut PassContext,
) -> PassResult {
    with_relax_function(m, g, |m, f| pass.run(f, &mut FunctionContext::new(m, g, cx))).unwrap_or(Ok(false))
}

/// Runs a PrimFunc pass on the function `g` of `m`, as [`run_on_relax_function`] does.
/// `Ok(false)` when `g` is not a PrimFunc.
pub fn run_on_prim_func(pass: &dyn PrimFuncPass, m: &mut Module, g: Global, cx: &mut PassContext) -> PassResult {
    with_prim_func(m, g, |m, f| pass.run(f, &mut FunctionContext::new(m, g, cx))).unwrap_or(Ok(false))
}

/// Calls `body` with the module and `&mut` to its Relax function `g`, taken out of its
/// slot meanwhile (see the [module documentation](self)), and puts the function back.
/// `None` when `g` is not a Relax function. Module passes use it to edit one function
/// while reading the others, without cloning it.
pub fn with_relax_function<R>(
    m: &mut Module,
    g: Global,
    body: impl FnOnce(&Module, &mut RelaxFunction) -> R,
) -> Option<R> {
    let slot = m.globals.get_mut(g)?;
    let mut f = match std::mem::replace(&mut slot.func, Func::Unresolved) {
        Func::Relax(f) => f,
        other => {
            slot.func = other;
            return None;
        }
    };
    let result = body(m, &mut f);
    m.globals[g].func = Func::Relax(f);
    Some(result)
}

/// [`with_relax_function`] for the PrimFunc `g`.
pub fn with_prim_func<R>(m: &mut Module, g: Global, body: impl FnOnce(&Module, &mut PrimFunc) -> R) -> Option<R> {
    let slot = m.globals.get_mut(g)?;
    let mut f = match std::mem::replace(&mut slot.func, Func::Unresolved) {
        Func::Prim(f) => f,
        other => {
            slot.func = other;
            return None;
        }
    };
    let result = body(m, &mut f);
    m.globals[g].func = Func::Prim(f);
    Some(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pass::{PrimFuncFn, RelaxFunctionFn};
    use relax_ir::Span;

    fn sees_itself_unresolved(f: &mut RelaxFunction, cx: &mut FunctionContext<'_>) -> PassResult {
        let m = cx.module();
        assert!(m.relax(cx.global()).is_none(), "the function is out of its slot");
        assert!(matches!(m.globals[cx.global()].func, Func::Unresolved));
        assert_eq!(m.lookup(cx.name()), Some(cx.global()), "its name stays visible");
        assert!(m.lookup("other").is_some_and(|o| m.relax(o).is_some()), "other functions are there");
        if cx.wants_remarks("p") {
            cx.emit(Diagnostic::remark(Span::NONE, format!("ran on {}", cx.name())));
        }
        f.func.attrs.set("seen", relax_ir::AttrValue::Bool(true));
        Ok(true)
    }

    fn fails(_: &mut PrimFunc, _: &mut FunctionContext<'_>) -> PassResult {
        Err(vec![Diagnostic::error(Span::NONE, "boom")])
    }

    const SRC: &str = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def k(A: T.Buffer((T.int64(4),), "float32")):
        A[T.int64(0)] = T.float32(1.0)

    @R.function
    def other(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        return x

    @R.function
    def f(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        return x
"#;

    #[test]
    fn a_function_is_taken_out_and_put_back() {
        let mut m = relax_parser::parse_module(SRC).expect("parses");
        let (f, k) = (m.lookup("f").expect("f"), m.lookup("k").expect("k"));
        let mut cx = PassContext { remarks_enabled: vec!["p".into()], ..Default::default() };
        assert_eq!(run_on_relax_function(&RelaxFunctionFn(sees_itself_unresolved), &mut m, f, &mut cx), Ok(true));
        assert!(m.relax(f).is_some_and(|f| f.func.attrs.get("seen").is_some()));
        assert_eq!(cx.remarks.len(), 1);
        assert_eq!(cx.remarks[0].message, "ran on f");
        // A function of another kind is not touched.
        assert_eq!(run_on_relax_function(&RelaxFunctionFn(sees_itself_unresolved), &mut m, k, &mut cx), Ok(false));
        // The function is back after an error too.
        assert!(run_on_prim_func(&PrimFuncFn(fails), &mut m, k, &mut cx).is_err());
        assert!(m.prim_func(k).is_some());
        relax_ir::verify::verify_module(&m).expect("the module is whole again");
    }
}
