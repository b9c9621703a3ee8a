//! Analyses shared by passes.
//!
//! * [`op_pattern`]: operator pattern kinds, of PrimFuncs (from their blocks) and of
//!   high-level Relax ops (by name).
//! * [`reshape_pattern`]: whether a PrimFunc is a row-major copy (TVM's
//!   `HasReshapePattern`).
//! * [`full_writes`]: the parameter buffers a kernel overwrites completely before it
//!   reads them (its results need no zero-filling).

pub mod full_writes;
pub mod op_pattern;
pub mod reshape_pattern;
