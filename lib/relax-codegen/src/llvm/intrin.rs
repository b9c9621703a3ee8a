//! Intrinsic calls (`T.exp`, `T.if_then_else`, `T.shift_left`, ...), computed as the
//! interpreter computes them (`relax_runtime::math`): a float function runs at the
//! precision of its type (`double` for float64, `float` for the others, then rounded),
//! through the libm function Rust's `f32`/`f64` methods call, an LLVM intrinsic that is
//! exact (`sqrt`, `floor`, `roundeven`, ...), or one of [`super::MATH_HELPERS`].

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::intrinsics::Intrinsic as LlvmIntrinsic;
use inkwell::types::{BasicType, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, FloatValue, FunctionValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use relax_ir::Intrinsic;
use relax_ir::{DataType, PrimExpr};

use super::expr::V;
use super::types::{int_type, is_bit};
use super::{Fx, R};
use crate::error::CodegenError;

impl<'ctx> Fx<'_, '_, 'ctx> {
    /// The declaration of an overloaded LLVM intrinsic.
    pub(super) fn llvm_intrinsic(&self, name: &str, types: &[BasicTypeEnum<'ctx>]) -> R<FunctionValue<'ctx>> {
        LlvmIntrinsic::find(name)
            .and_then(|i| i.get_declaration(self.sh.module, types))
            .ok_or_else(|| CodegenError::new(format!("internal error: no LLVM intrinsic `{name}`")))
    }

    /// The declaration of an external function (created on first use).
    pub(super) fn extern_fn(
        &self,
        name: &str,
        ret: BasicTypeEnum<'ctx>,
        params: &[BasicTypeEnum<'ctx>],
        pure: bool,
    ) -> FunctionValue<'ctx> {
        if let Some(f) = self.sh.module.get_function(name) {
            return f;
        }
        let ps: Vec<_> = params.iter().map(|&p| p.into()).collect();
        let f = self.sh.module.add_function(name, ret.fn_type(&ps, false), None);
        let cx = self.sh.cx;
        let attr = |n: &str, v: u64| -> Attribute { cx.create_enum_attribute(Attribute::get_named_enum_kind_id(n), v) };
        f.add_attribute(AttributeLoc::Function, attr("nounwind", 0));
        if pure {
            f.add_attribute(AttributeLoc::Function, attr("willreturn", 0));
            // memory(none)
            f.add_attribute(AttributeLoc::Function, attr("memory", 0));
        }
        f
    }

    fn call_value(&self, f: FunctionValue<'ctx>, args: &[BasicMetadataValueEnum<'ctx>]) -> R<BasicValueEnum<'ctx>> {
        let r = self.b.build_call(f, args, "call")?;
        r.try_as_basic_value().basic().ok_or_else(|| CodegenError::new("internal error: a call without a value"))
    }

    /// A unary float function on a `float` or `double`, without rounding.
    pub(super) fn float_fn1(&self, name: Intrinsic, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        if let Some(r) = self.device_math(name, &[x]) {
            return r;
        }
        let ty = x.get_type();
        let f64 = ty == self.sh.cx.f64_type();
        let bt = ty.as_basic_type_enum();
        let intrinsic = |n: &str| -> R<FloatValue<'ctx>> {
            let f = self.llvm_intrinsic(n, &[bt])?;
            Ok(self.call_value(f, &[x.into()])?.into_float_value())
        };
        let libm = |f32name: &str, f64name: &str| -> R<FloatValue<'ctx>> {
            let f = self.extern_fn(if f64 { f64name } else { f32name }, bt, &[bt], false);
            Ok(self.call_value(f, &[x.into()])?.into_float_value())
        };
        let helper = |base: &str| -> R<FloatValue<'ctx>> {
            let n = format!("relax_{base}_{}", if f64 { "f64" } else { "f32" });
            let f = self.extern_fn(&n, bt, &[bt], true);
            Ok(self.call_value(f, &[x.into()])?.into_float_value())
        };
        match name {
            Intrinsic::Exp => intrinsic("llvm.exp"),
            Intrinsic::Exp2 => intrinsic("llvm.exp2"),
            Intrinsic::Exp10 => {
                let f = self.llvm_intrinsic("llvm.pow", &[bt])?;
                Ok(self.call_value(f, &[ty.const_float(10.0).into(), x.into()])?.into_float_value())
            }
            Intrinsic::Expm1 => libm("expm1f", "expm1"),
            Intrinsic::Log => intrinsic("llvm.log"),
            Intrinsic::Log2 => intrinsic("llvm.log2"),
            Intrinsic::Log10 => intrinsic("llvm.log10"),
            Intrinsic::Log1p => libm("log1pf", "log1p"),
            Intrinsic::Sqrt => intrinsic("llvm.sqrt"),
            Intrinsic::Tanh => libm("tanhf", "tanh"),
            Intrinsic::Erf => helper("erf"),
            Intrinsic::Fabs | Intrinsic::Abs => intrinsic("llvm.fabs"),
            Intrinsic::Floor => intrinsic("llvm.floor"),
            Intrinsic::Ceil => intrinsic("llvm.ceil"),
            Intrinsic::Round | Intrinsic::Nearbyint => intrinsic("llvm.roundeven"),
            Intrinsic::Trunc => intrinsic("llvm.trunc"),
            Intrinsic::Sin => intrinsic("llvm.sin"),
            Intrinsic::Cos => intrinsic("llvm.cos"),
            Intrinsic::Tan => libm("tanf", "tan"),
            Intrinsic::Asin => libm("asinf", "asin"),
            Intrinsic::Acos => libm("acosf", "acos"),
            Intrinsic::Atan => libm("atanf", "atan"),
            Intrinsic::Sinh => libm("sinhf", "sinh"),
            Intrinsic::Cosh => libm("coshf", "cosh"),
            Intrinsic::Asinh => helper("asinh"),
            Intrinsic::Acosh => helper("acosh"),
            Intrinsic::Atanh => helper("atanh"),
            _ => Err(self.err(&format!("the intrinsic `T.{name}` is not supported by the code generator"))),
        }
    }

    /// A unary float intrinsic at the precision of `t` (rounded to it).
    fn float_unary(&self, name: Intrinsic, t: DataType, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let ty = x.get_type();
        let one = ty.const_float(1.0);
        let r = |v: FloatValue<'ctx>| self.round_to(v, t);
        match name {
            Intrinsic::Rsqrt => {
                let s = r(self.float_fn1(Intrinsic::Sqrt, x)?)?;
                r(self.b.build_float_div(one, s, "rsqrt")?)
            }
            Intrinsic::Sigmoid => {
                let n = self.b.build_float_neg(x, "n")?;
                let e = r(self.float_fn1(Intrinsic::Exp, n)?)?;
                let d = r(self.b.build_float_add(one, e, "d")?)?;
                r(self.b.build_float_div(one, d, "sig")?)
            }
            Intrinsic::Tanh if t.bits < 32 => {
                // Select(x >= 0, (1 - e^-2x) / (1 + e^-2x), (e^2x - 1) / (e^2x + 1)), each step rounded.
                let pos = self.b.build_float_compare(FloatPredicate::OGE, x, ty.const_zero(), "pos")?;
                let k = self.b.build_select(pos, ty.const_float(-2.0), ty.const_float(2.0), "k")?.into_float_value();
                let m = r(self.b.build_float_mul(k, x, "m")?)?;
                let e = r(self.float_fn1(Intrinsic::Exp, m)?)?;
                let num_p = r(self.b.build_float_sub(one, e, "np")?)?;
                let num_n = r(self.b.build_float_sub(e, one, "nn")?)?;
                let den = r(self.b.build_float_add(one, e, "den")?)?;
                let num = self.b.build_select(pos, num_p, num_n, "num")?.into_float_value();
                r(self.b.build_float_div(num, den, "tanh")?)
            }
            _ => r(self.float_fn1(name, x)?),
        }
    }

    /// A binary float intrinsic at the precision of `t`.
    fn float_binary_fn(
        &self,
        name: Intrinsic,
        t: DataType,
        a: FloatValue<'ctx>,
        b: FloatValue<'ctx>,
    ) -> R<FloatValue<'ctx>> {
        if let Some(r) = self.device_math(name, &[a, b]) {
            return self.round_to(r?, t);
        }
        let ty = a.get_type();
        let bt = ty.as_basic_type_enum();
        let f64 = ty == self.sh.cx.f64_type();
        let args = [a.into(), b.into()];
        let v = match name {
            Intrinsic::Pow => self.call_value(self.llvm_intrinsic("llvm.pow", &[bt])?, &args)?.into_float_value(),
            Intrinsic::Copysign => {
                self.call_value(self.llvm_intrinsic("llvm.copysign", &[bt])?, &args)?.into_float_value()
            }
            Intrinsic::Fmod => self.b.build_float_rem(a, b, "fmod")?,
            Intrinsic::Atan2 | Intrinsic::Hypot => {
                let n = if f64 { name.to_string() } else { format!("{name}f") };
                self.call_value(self.extern_fn(&n, bt, &[bt, bt], false), &args)?.into_float_value()
            }
            Intrinsic::Nextafter => {
                let n = format!("relax_nextafter_{}", if f64 { "f64" } else { "f32" });
                self.call_value(self.extern_fn(&n, bt, &[bt, bt], true), &args)?.into_float_value()
            }
            Intrinsic::Ldexp => {
                // a * 2^(b as i32), as the interpreter computes it.
                let i32t = self.sh.cx.i32_type();
                let sat = self.llvm_intrinsic("llvm.fptosi.sat", &[i32t.into(), bt])?;
                let e = self.call_value(sat, &[b.into()])?.into_int_value();
                let powi = self.llvm_intrinsic("llvm.powi", &[bt, i32t.into()])?;
                let p = self.call_value(powi, &[ty.const_float(2.0).into(), e.into()])?.into_float_value();
                self.b.build_float_mul(a, p, "ldexp")?
            }
            _ => {
                return Err(self.err(&format!(
                    "the intrinsic `T.{name}` with 2 arguments is not supported by the code generator"
                )));
            }
        };
        self.round_to(v, t)
    }

    /// A call expression.
    pub(super) fn call(&mut self, dtype: DataType, op: Intrinsic, args: &[PrimExpr]) -> R<V<'ctx>> {
        let arity = |n: usize| -> R<()> {
            if args.len() == n {
                Ok(())
            } else {
                Err(CodegenError::new(format!("intrinsic `T.{op}` takes {n} arguments, got {}", args.len())))
            }
        };
        match op {
            Intrinsic::IfThenElse => {
                arity(3)?;
                return self.choose(args[0], args[1], args[2]);
            }
            Intrinsic::Likely | Intrinsic::Assume => {
                arity(1)?;
                return self.eval(args[0]);
            }
            Intrinsic::TvmStorageSync => return Ok((self.sh.cx.i32_type().const_zero().into(), DataType::INT32)),
            Intrinsic::Ret => {
                arity(1)?;
                let (v, t) = self.eval(args[0])?;
                let Some(slot) = self.ret_slot else {
                    return Err(self.err("`T.ret` is not supported here by the code generator"));
                };
                let sv = self.to_slot(v, t)?;
                self.b.build_store(slot, sv)?;
                return Ok((v, t));
            }
            Intrinsic::Reinterpret => {
                arity(1)?;
                let (v, t) = self.eval(args[0])?;
                return self.reinterpret(v, t, dtype);
            }
            _ => {}
        }
        let mut vals = Vec::with_capacity(args.len());
        for &a in args {
            vals.push(self.eval(a)?);
        }
        match vals.as_slice() {
            [x] => self.unary_intrinsic(op, dtype, *x),
            [a, b] => self.binary_intrinsic(op, dtype, *a, *b),
            _ => Err(self.err(&format!(
                "the intrinsic `T.{op}` with {} arguments is not supported by the code generator",
                args.len()
            ))),
        }
    }

    fn unary_intrinsic(&mut self, op: Intrinsic, dtype: DataType, (x, xt): V<'ctx>) -> R<V<'ctx>> {
        let bool_ty = self.sh.cx.bool_type();
        if matches!(op, Intrinsic::Isnan | Intrinsic::Isinf | Intrinsic::Isfinite) {
            if !xt.is_float() {
                return Ok((bool_ty.const_int(u64::from(op == Intrinsic::Isfinite), false).into(), DataType::BOOL));
            }
            let fv = x.into_float_value();
            let r = match op {
                Intrinsic::Isnan => self.b.build_float_compare(FloatPredicate::UNO, fv, fv, "nan")?,
                _ => {
                    let a = self.float_fn1(Intrinsic::Fabs, fv)?;
                    let inf = fv.get_type().const_float(f64::INFINITY);
                    let p = if op == Intrinsic::Isinf { FloatPredicate::OEQ } else { FloatPredicate::OLT };
                    self.b.build_float_compare(p, a, inf, "cls")?
                }
            };
            return Ok((r.into(), DataType::BOOL));
        }
        if !xt.is_float() {
            match op {
                Intrinsic::Abs | Intrinsic::Fabs => {
                    if xt.is_signed_int() && !is_bit(xt) {
                        let iv = x.into_int_value();
                        let f = self.llvm_intrinsic("llvm.abs", &[iv.get_type().into()])?;
                        let r = self.call_value(f, &[iv.into(), bool_ty.const_zero().into()])?;
                        return Ok((r, xt));
                    }
                    return Ok((x, xt));
                }
                Intrinsic::BitwiseNot => return Ok((self.b.build_not(x.into_int_value(), "bnot")?.into(), xt)),
                Intrinsic::Popcount => {
                    let iv = x.into_int_value();
                    let f = self.llvm_intrinsic("llvm.ctpop", &[iv.get_type().into()])?;
                    let n = self.call_value(f, &[iv.into()])?;
                    let n = self.cast(n, if is_bit(xt) { DataType::UINT8 } else { xt }, DataType::INT64)?;
                    let out = if dtype.is_float() || dtype.is_void() { DataType::INT32 } else { dtype };
                    return Ok((self.cast(n, DataType::INT64, out)?, out));
                }
                Intrinsic::Floor | Intrinsic::Ceil | Intrinsic::Round | Intrinsic::Nearbyint | Intrinsic::Trunc => {
                    return Ok((x, xt));
                }
                _ => {}
            }
        }
        let t = if dtype.is_float() { dtype } else { xt };
        let t = if t.is_float() { t } else { DataType::FLOAT32 };
        let xv = self.cast(x, xt, t)?.into_float_value();
        Ok((self.float_unary(op, t, xv)?.into(), t))
    }

    fn binary_intrinsic(&mut self, op: Intrinsic, dtype: DataType, (a, at): V<'ctx>, (b, bt): V<'ctx>) -> R<V<'ctx>> {
        if !at.is_float()
            && matches!(
                op,
                Intrinsic::BitwiseAnd
                    | Intrinsic::BitwiseOr
                    | Intrinsic::BitwiseXor
                    | Intrinsic::ShiftLeft
                    | Intrinsic::ShiftRight
            )
        {
            return Ok((self.int_bits(op, a.into_int_value(), at, b, bt)?.into(), at));
        }
        let t = if dtype.is_float() { dtype } else { at };
        if !t.is_float() {
            return Err(self.err(&format!("the intrinsic `T.{op}` is not supported on {at} by the code generator")));
        }
        let x = self.cast(a, at, t)?.into_float_value();
        let y = self.cast(b, bt, t)?.into_float_value();
        Ok((self.float_binary_fn(op, t, x, y)?.into(), t))
    }

    /// Bitwise and shift intrinsics on integers of type `at`.
    fn int_bits(
        &self,
        op: Intrinsic,
        a: IntValue<'ctx>,
        at: DataType,
        b: BasicValueEnum<'ctx>,
        bt: DataType,
    ) -> R<IntValue<'ctx>> {
        let bld = &self.b;
        if matches!(op, Intrinsic::BitwiseAnd | Intrinsic::BitwiseOr | Intrinsic::BitwiseXor) {
            let y = self.cast(b, bt, at)?.into_int_value();
            return Ok(match op {
                Intrinsic::BitwiseAnd => bld.build_and(a, y, "band")?,
                Intrinsic::BitwiseOr => bld.build_or(a, y, "bor")?,
                _ => bld.build_xor(a, y, "bxor")?,
            });
        }
        let i64t = self.sh.cx.i64_type();
        let x = self.cast(a.into(), at, DataType::INT64)?.into_int_value();
        let y = self.to_i64(b, bt)?;
        let in_range = bld.build_int_compare(IntPredicate::ULT, y, i64t.const_int(64, false), "inr")?;
        let y = bld.build_and(y, i64t.const_int(63, false), "sh")?;
        let signed = at.is_signed_int() && !is_bit(at);
        let r = if op == Intrinsic::ShiftLeft {
            let s = bld.build_left_shift(x, y, "shl")?;
            bld.build_select(in_range, s, i64t.const_zero(), "shl")?.into_int_value()
        } else {
            let s = bld.build_right_shift(x, y, signed, "shr")?;
            let out = if signed {
                bld.build_right_shift(x, i64t.const_int(63, false), true, "sgn")?
            } else {
                i64t.const_zero()
            };
            bld.build_select(in_range, s, out, "shr")?.into_int_value()
        };
        Ok(self.cast(r.into(), DataType::INT64, at)?.into_int_value())
    }

    /// `T.reinterpret(dtype, v)`: the bits of `v` read as `dtype`.
    fn reinterpret(&self, v: BasicValueEnum<'ctx>, from: DataType, to: DataType) -> R<V<'ctx>> {
        if from.is_handle() || to.is_handle() {
            return Err(self.err("`T.reinterpret` of handles is not supported by the code generator"));
        }
        let cx = self.sh.cx;
        let m = self.to_mem(v, from)?;
        let fbits = (from.bytes() * 8) as u32;
        let tbits = (to.bytes() * 8) as u32;
        let bits = self.b.build_bit_cast(m, int_type(cx, fbits), "rb")?.into_int_value();
        let tt = int_type(cx, tbits);
        let bits = if tbits < fbits {
            self.b.build_int_truncate(bits, tt, "rb")?
        } else if tbits > fbits {
            self.b.build_int_z_extend(bits, tt, "rb")?
        } else {
            bits
        };
        let mt = self.mem_ty(to)?;
        let m = self.b.build_bit_cast(bits, mt, "rv")?;
        Ok((self.mem_to_value(m, to)?, to))
    }
}
