//! The calls into inkwell that are `unsafe`: address arithmetic (`getelementptr`).
//!
//! inkwell marks its GEP builders unsafe because a wrong index list can make invalid IR;
//! the code generator only ever indexes a pointer by one `i64` element count, and the
//! module is verified before use.
#![expect(unsafe_code, reason = "inkwell's getelementptr builders are unsafe functions")]

use inkwell::builder::{Builder, BuilderError};
use inkwell::types::BasicTypeEnum;
use inkwell::values::{IntValue, PointerValue};

/// `getelementptr inbounds elem, ptr base, i64 index`.
pub(super) fn elem_ptr<'ctx>(
    b: &Builder<'ctx>,
    elem: BasicTypeEnum<'ctx>,
    base: PointerValue<'ctx>,
    index: IntValue<'ctx>,
) -> Result<PointerValue<'ctx>, BuilderError> {
    // SAFETY: one index into an array of `elem`; the result is only used for loads and
    // stores of `elem`, and the module is verified before it is compiled.
    unsafe { b.build_in_bounds_gep(elem, base, &[index], "p") }
}

/// `getelementptr i8, ptr base, i64 bytes` (without `inbounds`: views may point anywhere
/// in their storage).
pub(super) fn byte_ptr<'ctx>(
    b: &Builder<'ctx>,
    i8_ty: BasicTypeEnum<'ctx>,
    base: PointerValue<'ctx>,
    bytes: IntValue<'ctx>,
) -> Result<PointerValue<'ctx>, BuilderError> {
    // SAFETY: as above, with byte offsets.
    unsafe { b.build_gep(i8_ty, base, &[bytes], "v") }
}
