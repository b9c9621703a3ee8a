//! The panel schedule (work in progress).

use relax_ir::{PrimFunc, Stmt};

use super::{Epilogue, Fused};

/// The schedule.
pub fn build(_f: &mut PrimFunc, _fused: &Fused, _epi: Option<&Epilogue>, _vector_bits: i64) -> Option<(Stmt, bool)> {
    None
}
