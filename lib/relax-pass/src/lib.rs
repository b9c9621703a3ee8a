//! Pass infrastructure in the manner of MLIR's pass manager.
//!
//! * [`pass`]: the three pass traits, one per anchor ([`ModulePass`],
//!   [`RelaxFunctionPass`], [`PrimFuncPass`]); a built pass is a [`PassKind`].
//! * [`context`]: what a pass sees while it runs ([`PassContext`], and for function
//!   passes [`FunctionContext`], with the function taken out of the module).
//! * [`declare`]: [`declare_pass!`], one declaration per pass that generates its registry
//!   entry and its typed options ([`options`]).
//! * [`registry`]: every pass has a kebab-case name, aliases, a one-line summary, a kind
//!   (its anchor) and typed options; named pipelines are registered beside them.
//! * [`pipeline`]: the textual pipeline grammar (`a,b{opt=1},relax.function(c)`), parsed
//!   into a tree whose `Display` prints back the canonical form.
//! * [`manager`]: runs a pipeline over a module, verifying after every pass what it could
//!   change and calling the instrumentation hooks ([`instrument`]) around each one.

pub mod anchor;
pub mod context;
pub mod declare;
pub mod instrument;
pub mod manager;
pub mod options;
pub mod pass;
pub mod pipeline;
pub mod registry;

pub use anchor::Anchor;
pub use context::{
    FunctionContext, PassContext, run_on_prim_func, run_on_relax_function, with_prim_func, with_relax_function,
};
pub use instrument::PassInstrumentation;
pub use manager::{PassManager, PipelineError, VerifyScope};
pub use options::{NoOptions, OptionError, OptionInfo, OptionValue, PassOptions, TypedOptions};
pub use pass::{
    ModuleFn, ModulePass, PassKind, PassResult, PrimFuncFn, PrimFuncPass, RelaxFunctionFn, RelaxFunctionPass,
};
pub use pipeline::{Pipeline, PipelineElement};
pub use registry::{PassFactory, PassInfo, PassRegistry};
