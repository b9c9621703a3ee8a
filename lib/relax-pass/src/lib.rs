//! Pass infrastructure in the manner of MLIR's pass manager.
//!
//! * [`registry`]: every pass has a kebab-case name, aliases, a one-line summary, an
//!   anchor and typed options; named pipelines are registered beside them.
//! * [`pipeline`]: the textual pipeline grammar (`a,b{opt=1},relax.function(c)`), parsed
//!   into a tree whose `Display` prints back the canonical form.
//! * [`manager`]: runs a pipeline over a module, verifying after every pass and calling
//!   the instrumentation hooks ([`instrument`]) around each one.

pub mod instrument;
pub mod manager;
pub mod pass;
pub mod pipeline;
pub mod registry;

pub use instrument::PassInstrumentation;
pub use manager::{PassManager, PipelineError};
pub use pass::{Anchor, FunctionFn, ModuleFn, Pass, PassContext, PassOptions, PassResult};
pub use pipeline::{Pipeline, PipelineElement};
pub use registry::{PassInfo, PassRegistry};
