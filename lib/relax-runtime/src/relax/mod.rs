//! The Relax interpreter: runs Relax functions binding by binding.
//!
//! * A call of a function makes a [`Frame`]: an environment of values by variable and
//!   the values of the function's symbolic variables. The parameters are checked against
//!   their annotations ([`crate::check`]), which also binds the symbolic variables.
//! * Bindings run in order ([`exec`]); `R.match_cast` checks its value; `if` runs one
//!   branch; a local function becomes a closure over the environment.
//! * Calls ([`call`]): Relax functions, PrimFuncs (called directly after
//!   `call-tir-rewrite`), closures, packed functions of the builtin registry
//!   ([`crate::builtins`]), and ops: the DPS and packed call ops, the memory ops, and
//!   compute ops, which run through a reference kernel or through their legalization
//!   ([`crate::ops`]).
//! * `R.memory.kill_*` and `R.vm.kill_object` end their variable: a later use is an
//!   error, so a pass that kills too early is caught.

pub mod call;
pub mod exec;
pub mod memory;
pub mod recycle;
pub mod sym;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use relax_entity::EntityRef;
use relax_ir::{Global, Module, RelaxFunction, Span, Var};

use crate::error::{RunError, RunResult};
use crate::value::Value;
use sym::Syms;

/// Options of an interpreter.
#[derive(Clone, Debug)]
pub struct Options {
    /// Run ops through their reference kernels when they have one (`true`, the default);
    /// `false` runs every op that has a legalization through it.
    pub kernels: bool,
    /// Check the result of every Relax function call against its declared type.
    pub check_results: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options { kernels: true, check_results: true }
    }
}

/// One slot of a frame.
#[derive(Clone)]
pub(crate) enum Slot {
    /// Not bound (yet).
    Empty,
    /// A value.
    Val(Value),
    /// Ended by a kill op (its name).
    Killed(&'static str),
}

/// The state of one Relax function call.
pub struct Frame<'m> {
    /// The module function whose arenas hold the code (the owner of a local function).
    pub g: Global,
    /// Its arenas.
    pub f: &'m RelaxFunction,
    pub(crate) vars: Vec<Slot>,
    /// Symbolic variables.
    pub syms: Syms,
}

impl<'m> Frame<'m> {
    pub(crate) fn new(g: Global, f: &'m RelaxFunction) -> Frame<'m> {
        Frame { g, f, vars: vec![Slot::Empty; f.vars.len()], syms: Syms::new(f.pool.vars.len()) }
    }

    /// Binds a variable.
    pub fn set(&mut self, v: Var, x: Value) {
        self.vars[v.index()] = Slot::Val(x);
    }

    /// The value of a variable.
    pub fn get(&self, v: Var) -> RunResult<Value> {
        match &self.vars[v.index()] {
            Slot::Val(x) => Ok(x.clone()),
            Slot::Empty => {
                Err(RunError::new(format!("variable `{}` is used before it has a value", self.f.vars[v].name)))
            }
            Slot::Killed(op) => {
                Err(RunError::new(format!("variable `{}` is used after `{op}` ended it", self.f.vars[v].name)))
            }
        }
    }

    /// The span where a variable is defined.
    pub fn var_span(&self, v: Var) -> Span {
        *self.f.spans.vars.get(v)
    }
}

/// The interpreter of one module.
pub struct Interpreter<'m> {
    /// The module.
    pub module: &'m Module,
    /// Options.
    pub options: Options,
    /// Legalized one-call modules of ops without a reference kernel, by call signature.
    pub(crate) legalized: RefCell<HashMap<String, Rc<Module>>>,
    /// Text printed by `R.print` and `relax.run.print`.
    pub printed: RefCell<String>,
    /// Call depth, to report runaway recursion instead of exhausting memory.
    pub(crate) depth: RefCell<usize>,
    /// Compiled kernels that run PrimFuncs instead of the TIR interpreter (the JIT).
    pub native: Option<&'m dyn crate::native::NativeKernels>,
    /// The lowering of op calls without a reference kernel ([`crate::lowering`]); without
    /// one, such calls are errors.
    pub lowering: Option<&'m dyn crate::lowering::OpLowering>,
    /// The storages of large `call_tir` results, reused once dropped ([`recycle`]).
    pub(crate) recycler: recycle::Recycler,
}

/// The deepest call nesting allowed.
pub const MAX_DEPTH: usize = 10_000;

impl<'m> Interpreter<'m> {
    /// An interpreter with default options.
    pub fn new(module: &'m Module) -> Interpreter<'m> {
        Interpreter::with_options(module, Options::default())
    }

    /// An interpreter with the given options.
    pub fn with_options(module: &'m Module, options: Options) -> Interpreter<'m> {
        Interpreter {
            module,
            options,
            legalized: RefCell::new(HashMap::new()),
            printed: RefCell::new(String::new()),
            depth: RefCell::new(0),
            native: None,
            lowering: None,
            recycler: recycle::Recycler::default(),
        }
    }

    /// Runs op calls without a reference kernel through `lowering`.
    pub fn with_lowering(mut self, lowering: &'m dyn crate::lowering::OpLowering) -> Interpreter<'m> {
        self.lowering = Some(lowering);
        self
    }

    /// Runs PrimFuncs through `native` where it has code for them.
    pub fn with_native(mut self, native: &'m dyn crate::native::NativeKernels) -> Interpreter<'m> {
        self.native = Some(native);
        self
    }

    /// Calls the function named `name` with arguments (checked against its parameters).
    pub fn run(&self, name: &str, args: Vec<Value>) -> RunResult<Value> {
        let g =
            self.module.lookup(name).ok_or_else(|| RunError::new(format!("the module has no function `{name}`")))?;
        self.call_global(g, args, Span::NONE)
    }

    /// Calls a module function (Relax or PrimFunc); `site` is the call's span.
    pub fn call_global(&self, g: Global, args: Vec<Value>, site: Span) -> RunResult<Value> {
        let m = self.module;
        if let Some(f) = m.relax(g) {
            let mut fr = Frame::new(g, f);
            return self.call_relax(&mut fr, &f.func, args, &m.globals[g].name, site);
        }
        if m.prim_func(g).is_some() {
            let native = self.native.and_then(|n| n.call(m, g, &args));
            let r = native.unwrap_or_else(|| crate::tir::call_prim_func(m, g, &args)).map_err(|e| e.or_at(site))?;
            return Ok(match r {
                Some(s) => Value::Prim(s),
                None => Value::unit(),
            });
        }
        match &m.globals[g].func {
            relax_ir::Func::Extern(e) => crate::builtins::call_packed(self, &e.symbol, &args),
            _ => Err(RunError::at(site, format!("`{}` cannot be called", m.globals[g].name))),
        }
    }

    /// Runs a function node in a prepared frame: checks and binds the parameters, runs
    /// the body, checks the result.
    pub(crate) fn call_relax(
        &self,
        fr: &mut Frame<'m>,
        node: &'m relax_ir::FunctionNode,
        args: Vec<Value>,
        name: &str,
        site: Span,
    ) -> RunResult<Value> {
        {
            let mut d = self.depth.borrow_mut();
            if *d >= MAX_DEPTH {
                return Err(RunError::at(site, format!("calls nest deeper than {MAX_DEPTH} levels (in `{name}`)")));
            }
            *d += 1;
        }
        let r = self.call_relax_inner(fr, node, args, name, site);
        *self.depth.borrow_mut() -= 1;
        r
    }

    fn call_relax_inner(
        &self,
        fr: &mut Frame<'m>,
        node: &'m relax_ir::FunctionNode,
        args: Vec<Value>,
        name: &str,
        site: Span,
    ) -> RunResult<Value> {
        if args.len() != node.params.len() {
            return Err(RunError::at(
                site,
                format!("`{name}` takes {} arguments, got {}", node.params.len(), args.len()),
            ));
        }
        exec::check_params(fr, node, &args, name)?;
        for (&p, a) in node.params.iter().zip(args) {
            fr.set(p, a);
        }
        let out = crate::tir::grow(|| self.exec_seq(fr, node.body))?;
        if self.options.check_results {
            exec::check_result(fr, node.ret, &out, name)?;
        }
        Ok(out)
    }
}
