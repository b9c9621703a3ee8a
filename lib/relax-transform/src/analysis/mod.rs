//! Analyses shared by passes.
//!
//! * [`op_pattern`]: operator pattern kinds, of PrimFuncs (from their blocks) and of
//!   high-level Relax ops (by name).
//! * [`reshape_pattern`]: whether a PrimFunc is a row-major copy (TVM's
//!   `HasReshapePattern`).

pub mod op_pattern;
pub mod reshape_pattern;
