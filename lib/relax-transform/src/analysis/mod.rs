//! Analyses shared by passes.
//!
//! * [`op_pattern`]: operator pattern kinds, of PrimFuncs (from their blocks) and of
//!   high-level Relax ops (by name).

pub mod op_pattern;
