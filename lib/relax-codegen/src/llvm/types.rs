//! Types and conversions: how each TIR dtype lives in registers and in memory, casts
//! with the interpreter's semantics, and rounding of the half-precision types.
//!
//! | dtype | register | memory |
//! |---|---|---|
//! | bool, int1 | `i1` | `i8` |
//! | int8..64, uint8..64 | `iN` | `iN` |
//! | float32 | `float` | `float` |
//! | float16 | `float`, holding a float16 value | `half` |
//! | bfloat16 | `float`, holding a bfloat16 value | `i16` |
//! | float64 | `double` | `double` |
//! | handle | `ptr` | `ptr` |

use inkwell::types::{BasicType, BasicTypeEnum, FloatType};
use inkwell::values::{BasicValueEnum, FloatValue, IntValue};
use inkwell::{AddressSpace, FloatPredicate, IntPredicate};
use relax_ir::{DataType, TypeCode};

use super::{Fx, R};
use crate::error::CodegenError;

/// True for the dtypes the code generator computes with (the interpreter's set).
pub(super) fn supported(dt: DataType) -> bool {
    dt.lanes == 1
        && match dt.code {
            TypeCode::Float => matches!(dt.bits, 16 | 32 | 64),
            TypeCode::BFloat => dt.bits == 16,
            TypeCode::Bool => true,
            TypeCode::Int | TypeCode::UInt => matches!(dt.bits, 1 | 8 | 16 | 32 | 64),
            TypeCode::Handle => true,
            _ => false,
        }
}

/// True for bool and 1-bit integers (an `i1` in registers).
pub(super) fn is_bit(dt: DataType) -> bool {
    dt.is_bool() || (dt.is_int() && dt.bits == 1)
}

/// True for float16 and bfloat16, which compute in `f32`.
pub(super) fn is_half(dt: DataType) -> bool {
    dt.is_float() && dt.bits == 16
}

/// The integer type of a width of 1, 8, 16, 32 or 64 bits (64 otherwise).
pub(super) fn int_type(cx: &inkwell::context::Context, bits: u32) -> inkwell::types::IntType<'_> {
    match bits {
        1 => cx.bool_type(),
        8 => cx.i8_type(),
        16 => cx.i16_type(),
        32 => cx.i32_type(),
        _ => cx.i64_type(),
    }
}

/// The register type of `dt`; `None` for unsupported dtypes.
pub(super) fn reg_type(cx: &inkwell::context::Context, dt: DataType) -> Option<BasicTypeEnum<'_>> {
    if !supported(dt) {
        return None;
    }
    Some(match dt.code {
        TypeCode::Handle => cx.ptr_type(AddressSpace::default()).into(),
        TypeCode::Float if dt.bits == 64 => cx.f64_type().into(),
        TypeCode::Float | TypeCode::BFloat => cx.f32_type().into(),
        _ if is_bit(dt) => cx.bool_type().into(),
        _ => int_type(cx, u32::from(dt.bits)).into(),
    })
}

impl<'ctx> Fx<'_, '_, 'ctx> {
    fn unsupported(&self, dt: DataType) -> CodegenError {
        CodegenError::new(format!(
            "PrimFunc `{}`: values of dtype {dt} are not supported by the code generator",
            self.sh.name
        ))
    }

    /// The register type of `dt`.
    pub(super) fn reg_ty(&self, dt: DataType) -> R<BasicTypeEnum<'ctx>> {
        reg_type(self.sh.cx, dt).ok_or_else(|| self.unsupported(dt))
    }

    /// The memory type of `dt`.
    pub(super) fn mem_ty(&self, dt: DataType) -> R<BasicTypeEnum<'ctx>> {
        let cx = self.sh.cx;
        if !supported(dt) {
            return Err(self.unsupported(dt));
        }
        Ok(match dt.code {
            TypeCode::Float if dt.bits == 16 => cx.f16_type().into(),
            TypeCode::BFloat => cx.i16_type().into(),
            _ if is_bit(dt) => cx.i8_type().into(),
            _ => self.reg_ty(dt)?,
        })
    }

    /// The float register type of a float dtype.
    pub(super) fn float_ty(&self, dt: DataType) -> FloatType<'ctx> {
        if dt.bits == 64 { self.sh.cx.f64_type() } else { self.sh.cx.f32_type() }
    }

    pub(super) fn i64c(&self, v: i64) -> IntValue<'ctx> {
        self.sh.cx.i64_type().const_int(v as u64, true)
    }

    /// A loaded memory value as a register value.
    pub(super) fn mem_to_value(&self, v: BasicValueEnum<'ctx>, dt: DataType) -> R<BasicValueEnum<'ctx>> {
        let b = &self.b;
        let cx = self.sh.cx;
        Ok(match dt.code {
            TypeCode::Float if dt.bits == 16 => b.build_float_ext(v.into_float_value(), cx.f32_type(), "h")?.into(),
            TypeCode::BFloat => {
                let w = b.build_int_z_extend(v.into_int_value(), cx.i32_type(), "bf")?;
                let w = b.build_left_shift(w, cx.i32_type().const_int(16, false), "bf")?;
                b.build_bit_cast(w, cx.f32_type(), "bf")?
            }
            _ if is_bit(dt) => {
                b.build_int_compare(IntPredicate::NE, v.into_int_value(), cx.i8_type().const_zero(), "b")?.into()
            }
            _ => v,
        })
    }

    /// A register value in its memory form.
    pub(super) fn to_mem(&self, v: BasicValueEnum<'ctx>, dt: DataType) -> R<BasicValueEnum<'ctx>> {
        let b = &self.b;
        let cx = self.sh.cx;
        Ok(match dt.code {
            TypeCode::Float if dt.bits == 16 => b.build_float_trunc(v.into_float_value(), cx.f16_type(), "h")?.into(),
            TypeCode::BFloat => self.bf16_bits(v.into_float_value())?.into(),
            _ if is_bit(dt) => b.build_int_z_extend(v.into_int_value(), cx.i8_type(), "b")?.into(),
            _ => v,
        })
    }

    /// The bfloat16 bits of an `f32`, rounded to nearest even (NaN stays NaN), as the
    /// `half` crate rounds.
    fn bf16_bits(&self, v: FloatValue<'ctx>) -> R<IntValue<'ctx>> {
        let b = &self.b;
        let i32t = self.sh.cx.i32_type();
        let c = |x: u64| i32t.const_int(x, false);
        let x = b.build_bit_cast(v, i32t, "x")?.into_int_value();
        let hi = b.build_right_shift(x, c(16), false, "hi")?;
        // Round up when the round bit is set and the bits below it or the last kept bit are.
        let round = b.build_and(x, c(0x8000), "r")?;
        let round = b.build_int_compare(IntPredicate::NE, round, c(0), "r")?;
        let rest = b.build_and(x, c(3 * 0x8000 - 1), "s")?;
        let rest = b.build_int_compare(IntPredicate::NE, rest, c(0), "s")?;
        let up = b.build_and(round, rest, "u")?;
        let up = b.build_int_z_extend(up, i32t, "u")?;
        let rounded = b.build_int_add(hi, up, "ru")?;
        // NaN: keep the sign and payload, set the quiet bit.
        let abs = b.build_and(x, c(0x7fff_ffff), "a")?;
        let nan = b.build_int_compare(IntPredicate::UGT, abs, c(0x7f80_0000), "nan")?;
        let quiet = b.build_or(hi, c(0x0040), "q")?;
        let r = b.build_select(nan, quiet, rounded, "bf")?.into_int_value();
        Ok(b.build_int_truncate(r, self.sh.cx.i16_type(), "bf")?)
    }

    /// Rounds an `f32` register value to float16 or bfloat16 (identity for other types).
    pub(super) fn round_to(&self, v: FloatValue<'ctx>, dt: DataType) -> R<FloatValue<'ctx>> {
        if !is_half(dt) {
            return Ok(v);
        }
        let m = self.to_mem(v.into(), dt)?;
        Ok(self.mem_to_value(m, dt)?.into_float_value())
    }

    /// Rounds a `double` to the nearest value of a float type (ties to even), as an `f32`
    /// register value for float32/16/bfloat16. Half types go through `f32` rounded to odd,
    /// which makes the second rounding exact.
    fn round_f64_to(&self, v: FloatValue<'ctx>, dt: DataType) -> R<FloatValue<'ctx>> {
        let b = &self.b;
        let cx = self.sh.cx;
        let f32t = cx.f32_type();
        if dt.bits == 64 {
            return Ok(v);
        }
        let r = b.build_float_trunc(v, f32t, "t")?;
        if !is_half(dt) {
            return Ok(r);
        }
        let i32t = cx.i32_type();
        let back = b.build_float_ext(r, cx.f64_type(), "e")?;
        let absv = self.fabs(v)?;
        let absb = self.fabs(back)?;
        // Truncate toward zero, then set the sticky bit when inexact.
        let bits = b.build_bit_cast(r, i32t, "b")?.into_int_value();
        let too_big = b.build_float_compare(FloatPredicate::OGT, absb, absv, "big")?;
        let dec = b.build_int_sub(bits, i32t.const_int(1, false), "d")?;
        let bits = b.build_select(too_big, dec, bits, "tz")?.into_int_value();
        let inexact = b.build_float_compare(FloatPredicate::ONE, back, v, "inx")?;
        let odd = b.build_or(bits, i32t.const_int(1, false), "o")?;
        let bits = b.build_select(inexact, odd, bits, "rto")?;
        let r = b.build_bit_cast(bits, f32t, "rto")?.into_float_value();
        self.round_to(r, dt)
    }

    fn fabs(&self, v: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let f = self.llvm_intrinsic("llvm.fabs", &[v.get_type().as_basic_type_enum()])?;
        let r = self.b.build_call(f, &[v.into()], "abs")?;
        Ok(r.try_as_basic_value().basic().expect("fabs returns a value").into_float_value())
    }

    /// Truthiness: non-zero (`une 0.0` for floats, so NaN is true).
    pub(super) fn is_true(&self, v: BasicValueEnum<'ctx>, dt: DataType) -> R<IntValue<'ctx>> {
        let b = &self.b;
        if dt.is_float() {
            let fv = v.into_float_value();
            return Ok(b.build_float_compare(FloatPredicate::UNE, fv, fv.get_type().const_zero(), "t")?);
        }
        if is_bit(dt) {
            return Ok(v.into_int_value());
        }
        if dt.is_handle() {
            return Ok(b.build_is_not_null(v.into_pointer_value(), "t")?);
        }
        let iv = v.into_int_value();
        Ok(b.build_int_compare(IntPredicate::NE, iv, iv.get_type().const_zero(), "t")?)
    }

    /// A value as an `i64` (an index): integers sign- or zero-extended, floats truncated
    /// toward zero (saturating).
    pub(super) fn to_i64(&self, v: BasicValueEnum<'ctx>, dt: DataType) -> R<IntValue<'ctx>> {
        Ok(self.cast(v, dt, DataType::INT64)?.into_int_value())
    }

    /// Converts between dtypes as the interpreter does: integers wrap, floats round to
    /// nearest (ties to even), floats to integers truncate toward zero (NaN is 0, out of
    /// range saturates), anything to bool tests for non-zero.
    pub(super) fn cast(&self, v: BasicValueEnum<'ctx>, from: DataType, to: DataType) -> R<BasicValueEnum<'ctx>> {
        if from == to {
            return Ok(v);
        }
        let b = &self.b;
        let cx = self.sh.cx;
        if is_bit(to) {
            return Ok(self.is_true(v, from)?.into());
        }
        if to.is_handle() || from.is_handle() {
            return Err(CodegenError::new(format!(
                "PrimFunc `{}`: cannot convert {from} to {to} in generated code",
                self.sh.name
            )));
        }
        if to.is_float() {
            if from.is_float() {
                let fv = v.into_float_value();
                return Ok(match (from.bits == 64, to.bits == 64) {
                    (true, true) | (false, false) if !is_half(to) => fv.into(),
                    (false, true) => b.build_float_ext(fv, cx.f64_type(), "fx")?.into(),
                    (true, false) => self.round_f64_to(fv, to)?.into(),
                    _ => self.round_to(fv, to)?.into(),
                });
            }
            let iv = v.into_int_value();
            let d = if from.is_signed_int() && !is_bit(from) {
                b.build_signed_int_to_float(iv, cx.f64_type(), "if")?
            } else {
                b.build_unsigned_int_to_float(iv, cx.f64_type(), "uf")?
            };
            return Ok(self.round_f64_to(d, to)?.into());
        }
        let it = self.reg_ty(to)?.into_int_type();
        if from.is_float() {
            let i64t = cx.i64_type();
            let fv = v.into_float_value();
            let fty = fv.get_type().as_basic_type_enum();
            let sat_s = self.llvm_intrinsic("llvm.fptosi.sat", &[i64t.into(), fty])?;
            let s = b.build_call(sat_s, &[fv.into()], "fs")?.try_as_basic_value().basic().expect("a value");
            let mut r = s.into_int_value();
            if to.is_uint() && to.bits == 64 {
                let sat_u = self.llvm_intrinsic("llvm.fptoui.sat", &[i64t.into(), fty])?;
                let u = b.build_call(sat_u, &[fv.into()], "fu")?.try_as_basic_value().basic().expect("a value");
                let neg = b.build_float_compare(FloatPredicate::OLT, fv, fv.get_type().const_zero(), "neg")?;
                r = b.build_select(neg, r, u.into_int_value(), "fi")?.into_int_value();
            }
            return Ok(if to.bits < 64 { b.build_int_truncate(r, it, "ft")?.into() } else { r.into() });
        }
        let iv = v.into_int_value();
        let (fb, tb) = (u32::from(from.bits), u32::from(to.bits));
        Ok(if tb < fb {
            b.build_int_truncate(iv, it, "it")?.into()
        } else if tb > fb {
            if from.is_signed_int() && !is_bit(from) {
                b.build_int_s_extend(iv, it, "is")?.into()
            } else {
                b.build_int_z_extend(iv, it, "iz")?.into()
            }
        } else {
            iv.into()
        })
    }
}
