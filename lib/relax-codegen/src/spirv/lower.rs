//! The kernels of one PrimFunc as SPIR-V functions: statements as structured control
//! flow, expressions as SPIR-V values (`super` describes the layout).

use std::collections::HashMap;

use relax_ir::{BinOp, Buffer, DataType, PrimExpr, PrimExprData, PrimFunc, Span, Stmt, StmtData, SymVar, TypeCode};
use relax_ir::{Intrinsic, TirOp};
use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{self, Word};

use super::Cx;
use crate::error::CodegenError;
use crate::gpu::{GpuFunc, Launch};

type R<T> = Result<T, CodegenError>;

/// GLSL.std.450 instruction numbers.
mod glsl {
    pub const ROUND_EVEN: u32 = 2;
    pub const TRUNC: u32 = 3;
    pub const FABS: u32 = 4;
    pub const SABS: u32 = 5;
    pub const FLOOR: u32 = 8;
    pub const CEIL: u32 = 9;
    pub const SIN: u32 = 13;
    pub const COS: u32 = 14;
    pub const TAN: u32 = 15;
    pub const ASIN: u32 = 16;
    pub const ACOS: u32 = 17;
    pub const ATAN: u32 = 18;
    pub const SINH: u32 = 19;
    pub const COSH: u32 = 20;
    pub const TANH: u32 = 21;
    pub const ASINH: u32 = 22;
    pub const ACOSH: u32 = 23;
    pub const ATANH: u32 = 24;
    pub const ATAN2: u32 = 25;
    pub const POW: u32 = 26;
    pub const EXP: u32 = 27;
    pub const LOG: u32 = 28;
    pub const EXP2: u32 = 29;
    pub const LOG2: u32 = 30;
    pub const SQRT: u32 = 31;
    pub const INVERSE_SQRT: u32 = 32;
}

/// The state of one kernel being built.
struct Fx<'c, 'a> {
    cx: &'c mut Cx,
    f: &'a PrimFunc,
    gf: &'a GpuFunc,
    /// Storage-buffer variables, by binding.
    bufs: Vec<(Word, Word)>,
    /// The push-constant variable and the slot of each scalar argument.
    push: Option<Word>,
    /// Values of immutable variables (thread indices, lets).
    ssa: HashMap<SymVar, Word>,
    /// Function variables of loop variables.
    loops: HashMap<SymVar, Word>,
    /// The label of the block being built.
    cur: Word,
    at: Span,
}

/// Adds the kernels of `f` to the module.
pub(super) fn lower_func(cx: &mut Cx, f: &PrimFunc, gf: &GpuFunc) -> R<()> {
    // Storage buffers.
    let mut bufs = Vec::new();
    for (i, gb) in gf.buffers.iter().enumerate() {
        let bd = f.buffer(gb.buffer);
        let elem = storage_type(cx, bd.dtype)
            .map_err(|m| CodegenError::new(format!("buffer `{}`: {m}", bd.name)).or_at(f.spans.buffers[gb.buffer]))?;
        let block = cx.storage_block(elem, (bd.dtype.bits as u32).div_ceil(8));
        let ptr = cx.b.type_pointer(None, spirv::StorageClass::StorageBuffer, block);
        let var = cx.b.variable(ptr, None, spirv::StorageClass::StorageBuffer, None);
        cx.b.decorate(var, spirv::Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
        cx.b.decorate(var, spirv::Decoration::Binding, [Operand::LiteralBit32(i as u32)]);
        cx.b.name(var, format!("{}_{}", gf.name, bd.name));
        bufs.push((var, elem));
    }
    // Push constants: one 8-byte slot per scalar argument.
    let push = if gf.scalars.is_empty() {
        None
    } else {
        let mut members = Vec::new();
        for &v in &gf.scalars {
            let dt = f.pool.vars[v].dtype;
            members.push(value_type(cx, dt).map_err(|m| {
                CodegenError::new(format!("scalar `{}`: {m}", f.pool.vars[v].name)).or_at(f.spans.func)
            })?);
        }
        let id = cx.b.id();
        let st = cx.b.type_struct_id(Some(id), members);
        cx.b.decorate(st, spirv::Decoration::Block, []);
        for i in 0..gf.scalars.len() {
            cx.b.member_decorate(st, i as u32, spirv::Decoration::Offset, [Operand::LiteralBit32(8 * i as u32)]);
        }
        let ptr = cx.b.type_pointer(None, spirv::StorageClass::PushConstant, st);
        let var = cx.b.variable(ptr, None, spirv::StorageClass::PushConstant, None);
        cx.b.name(var, format!("{}_args", gf.name));
        Some(var)
    };
    for l in &gf.launches {
        let mut fx = Fx {
            cx,
            f,
            gf,
            bufs: bufs.clone(),
            push,
            ssa: HashMap::new(),
            loops: HashMap::new(),
            cur: 0,
            at: f.spans.func,
        };
        fx.kernel(l)?;
    }
    Ok(())
}

/// The SPIR-V type of a buffer element.
fn storage_type(cx: &mut Cx, dt: DataType) -> Result<Word, String> {
    if dt.lanes != 1 || dt.is_bool() {
        return Err(format!("element type `{dt}` is not supported by the SPIR-V backend"));
    }
    value_type(cx, dt)
}

/// The SPIR-V type of a scalar value.
fn value_type(cx: &mut Cx, dt: DataType) -> Result<Word, String> {
    if dt.lanes != 1 {
        return Err(format!("vector type `{dt}` is not supported by the SPIR-V backend"));
    }
    Ok(match (dt.code, dt.bits) {
        (TypeCode::Bool, _) => cx.b.type_bool(),
        (TypeCode::Int, 32) => cx.b.type_int(32, 1),
        (TypeCode::Int, 64) => {
            cx.int64 = true;
            cx.b.type_int(64, 1)
        }
        (TypeCode::UInt, 32) => cx.b.type_int(32, 0),
        (TypeCode::UInt, 64) => {
            cx.int64 = true;
            cx.b.type_int(64, 0)
        }
        (TypeCode::Float, 32) => cx.b.type_float(32),
        (TypeCode::Float, 64) => {
            cx.float64 = true;
            cx.b.type_float(64)
        }
        _ => return Err(format!("type `{dt}` is not supported by the SPIR-V backend")),
    })
}

impl Fx<'_, '_> {
    fn err(&self, msg: impl Into<String>) -> CodegenError {
        CodegenError::new(msg).or_at(self.at)
    }

    fn ty(&mut self, dt: DataType) -> R<Word> {
        value_type(self.cx, dt).map_err(|m| self.err(m))
    }

    fn block(&mut self, label: Word) -> R<()> {
        self.cx.b.begin_block(Some(label))?;
        self.cur = label;
        Ok(())
    }

    fn kernel(&mut self, l: &Launch) -> R<()> {
        let void = self.cx.b.type_void();
        let fnty = self.cx.b.type_function(void, []);
        let func = self.cx.b.begin_function(void, None, spirv::FunctionControl::NONE, fnty)?;
        let entry = self.cx.b.id();
        self.block(entry)?;
        // Function variables for every loop variable.
        let mut loop_vars = Vec::new();
        self.f.walk(l.body, |_, s| {
            if let StmtData::For { var, .. } = s {
                loop_vars.push(*var);
            }
        });
        for v in loop_vars {
            let t = self.ty(self.f.pool.vars[v].dtype)?;
            let p = self.cx.b.type_pointer(None, spirv::StorageClass::Function, t);
            let var = self.cx.b.variable(p, None, spirv::StorageClass::Function, None);
            self.loops.insert(v, var);
        }
        // Block and thread indices.
        let u32t = self.cx.b.type_int(32, 0);
        let v3 = self.cx.b.type_vector(u32t, 3);
        let (wg_v, nwg_v, lid_v) = (self.cx.wg_id, self.cx.num_wg, self.cx.local_id);
        let b = &mut self.cx.b;
        let wg = b.load(v3, None, wg_v, None, [])?;
        let nwg = b.load(v3, None, nwg_v, None, [])?;
        let lid = b.load(v3, None, lid_v, None, [])?;
        let wx = b.composite_extract(u32t, None, wg, [0])?;
        let wy = b.composite_extract(u32t, None, wg, [1])?;
        let nx = b.composite_extract(u32t, None, nwg, [0])?;
        let lx = b.composite_extract(u32t, None, lid, [0])?;
        let row = b.i_mul(u32t, None, wy, nx)?;
        let bx = b.i_add(u32t, None, row, wx)?;
        let bdt = self.f.pool.vars[l.block_var].dtype;
        let tdt = self.f.pool.vars[l.thread_var].dtype;
        let bxv = self.index_value(bx, bdt)?;
        let txv = self.index_value(lx, tdt)?;
        let bmin = self.expr(l.block_min)?;
        let tmin = self.expr(l.thread_min)?;
        let bval = self.arith(BinOp::Add, bdt, bxv, bmin)?;
        let tval = self.arith(BinOp::Add, tdt, txv, tmin)?;
        self.ssa.insert(l.block_var, bval);
        self.ssa.insert(l.thread_var, tval);
        let blocks = self.expr(l.blocks)?;
        let bdt_blocks = self.f.pool.dtype(l.blocks);
        let blocks = self.convert(blocks, bdt_blocks, bdt)?;
        let inside = self.compare(BinOp::Lt, bdt, bxv, blocks)?;
        self.if_then(inside, |fx| fx.stmt(l.body))?;
        self.cx.b.ret()?;
        self.cx.b.end_function()?;
        let (a, b2, c) = (self.cx.wg_id, self.cx.local_id, self.cx.num_wg);
        self.cx.b.entry_point(spirv::ExecutionModel::GLCompute, func, &l.entry, [a, b2, c]);
        self.cx.b.execution_mode(func, spirv::ExecutionMode::LocalSize, [l.threads, 1, 1]);
        Ok(())
    }

    /// A `u32` index as a value of type `dt`.
    fn index_value(&mut self, v: Word, dt: DataType) -> R<Word> {
        let t = self.ty(dt)?;
        match dt.bits {
            32 => self.cx.b.bitcast(t, None, v).map_err(CodegenError::from),
            64 => {
                let u64t = self.cx.b.type_int(64, 0);
                let w = self.cx.b.u_convert(u64t, None, v)?;
                self.cx.b.bitcast(t, None, w).map_err(CodegenError::from)
            }
            _ => Err(self.err(format!("thread index of type `{dt}` is not supported"))),
        }
    }

    fn if_then(&mut self, cond: Word, then: impl FnOnce(&mut Self) -> R<()>) -> R<()> {
        let (t, merge) = (self.cx.b.id(), self.cx.b.id());
        self.cx.b.selection_merge(merge, spirv::SelectionControl::NONE)?;
        self.cx.b.branch_conditional(cond, t, merge, [])?;
        self.block(t)?;
        then(self)?;
        self.cx.b.branch(merge)?;
        self.block(merge)
    }

    fn stmt(&mut self, s: Stmt) -> R<()> {
        let f = self.f;
        let saved = self.at;
        if !f.spans.stmts[s].is_none() {
            self.at = f.spans.stmts[s];
        }
        let r = self.stmt_inner(s);
        self.at = saved;
        r
    }

    fn stmt_inner(&mut self, s: Stmt) -> R<()> {
        let f = self.f;
        match &f.stmts[s] {
            StmtData::Seq(v) => v.iter().try_for_each(|&x| self.stmt(x)),
            StmtData::For { var, min, extent, step, body, .. } => self.for_loop(*var, *min, *extent, *step, *body),
            StmtData::Block(_) => Err(crate::error::not_lowered(&self.gf.name).or_at(self.at)),
            StmtData::Store { buffer, indices, value } => {
                let v = self.expr(*value)?;
                let (ptr, _) = self.element(*buffer, indices)?;
                self.cx.b.store(ptr, v, None, []).map_err(CodegenError::from)
            }
            StmtData::If { cond, then_branch, else_branch } => {
                let c = self.cond(*cond)?;
                let (t, e, merge) = (self.cx.b.id(), self.cx.b.id(), self.cx.b.id());
                let other = if else_branch.is_some() { e } else { merge };
                self.cx.b.selection_merge(merge, spirv::SelectionControl::NONE)?;
                self.cx.b.branch_conditional(c, t, other, [])?;
                self.block(t)?;
                self.stmt(*then_branch)?;
                self.cx.b.branch(merge)?;
                if let Some(eb) = else_branch {
                    self.block(e)?;
                    self.stmt(*eb)?;
                    self.cx.b.branch(merge)?;
                }
                self.block(merge)
            }
            StmtData::Let { var, value, body } => {
                let v = self.expr(*value)?;
                self.ssa.insert(*var, v);
                self.stmt(*body)
            }
            StmtData::Evaluate(e) => self.expr(*e).map(|_| ()),
            StmtData::Attr { body, .. } | StmtData::DeclBuffer { body, .. } => self.stmt(*body),
            StmtData::While { .. } => Err(self.err("`while` loops are not supported by the SPIR-V backend")),
            StmtData::Assert { .. } => Err(self.err("`assert` is not supported in GPU kernels")),
            StmtData::Allocate { .. } => Err(self.err("allocations inside a GPU kernel are not supported")),
        }
    }

    fn for_loop(&mut self, var: SymVar, min: PrimExpr, extent: PrimExpr, step: Option<PrimExpr>, body: Stmt) -> R<()> {
        let dt = self.f.pool.vars[var].dtype;
        let slot = self.loops[&var];
        let lo = self.expr(min)?;
        let lo = self.convert(lo, self.f.pool.dtype(min), dt)?;
        let ext = self.expr(extent)?;
        let ext = self.convert(ext, self.f.pool.dtype(extent), dt)?;
        let hi = self.arith(BinOp::Add, dt, lo, ext)?;
        let inc = match step {
            Some(st) => {
                let v = self.expr(st)?;
                self.convert(v, self.f.pool.dtype(st), dt)?
            }
            None => self.int_const(dt, 1)?,
        };
        self.cx.b.store(slot, lo, None, [])?;
        let ids: Vec<Word> = (0..5).map(|_| self.cx.b.id()).collect();
        let (header, check, body_b, cont, merge) = (ids[0], ids[1], ids[2], ids[3], ids[4]);
        self.cx.b.branch(header)?;
        self.block(header)?;
        self.cx.b.loop_merge(merge, cont, spirv::LoopControl::NONE, [])?;
        self.cx.b.branch(check)?;
        self.block(check)?;
        let t = self.ty(dt)?;
        let i = self.cx.b.load(t, None, slot, None, [])?;
        let c = self.compare(BinOp::Lt, dt, i, hi)?;
        self.cx.b.branch_conditional(c, body_b, merge, [])?;
        self.block(body_b)?;
        self.stmt(body)?;
        self.cx.b.branch(cont)?;
        self.block(cont)?;
        let i = self.cx.b.load(t, None, slot, None, [])?;
        let n = self.arith(BinOp::Add, dt, i, inc)?;
        self.cx.b.store(slot, n, None, [])?;
        self.cx.b.branch(header)?;
        self.block(merge)
    }

    /// A pointer to `buffer[indices]` and the element type.
    fn element(&mut self, buffer: Buffer, indices: &[PrimExpr]) -> R<(Word, Word)> {
        let f = self.f;
        let Some(binding) = self.gf.binding(buffer) else {
            return Err(
                self.err(format!("buffer `{}` is neither a parameter nor a root allocation", f.buffer(buffer).name))
            );
        };
        let bd = f.buffer(buffer);
        let i64t = DataType::INT64;
        // Flat index: sum of index * stride (compact row-major unless strides are given).
        let n = indices.len();
        let mut strides: Vec<Word> = vec![0; n];
        if bd.strides.len() == n && n > 0 {
            for (k, &s) in bd.strides.iter().enumerate() {
                let v = self.expr(s)?;
                strides[k] = self.convert(v, f.pool.dtype(s), i64t)?;
            }
        } else {
            let mut acc = self.int_const(i64t, 1)?;
            for k in (0..n).rev() {
                strides[k] = acc;
                if k > 0 {
                    let d =
                        bd.shape.get(k).copied().ok_or_else(|| self.err("index count does not match the buffer"))?;
                    let dv = self.expr(d)?;
                    let dv = self.convert(dv, f.pool.dtype(d), i64t)?;
                    acc = self.arith(BinOp::Mul, i64t, acc, dv)?;
                }
            }
        }
        let mut flat = match bd.elem_offset {
            Some(o) => {
                let v = self.expr(o)?;
                self.convert(v, f.pool.dtype(o), i64t)?
            }
            None => self.int_const(i64t, 0)?,
        };
        for (k, &ix) in indices.iter().enumerate() {
            let v = self.expr(ix)?;
            let v = self.convert(v, f.pool.dtype(ix), i64t)?;
            let term =
                if Some(1) == self.const_of(strides[k]) { v } else { self.arith(BinOp::Mul, i64t, v, strides[k])? };
            flat = if Some(0) == self.const_of(flat) { term } else { self.arith(BinOp::Add, i64t, flat, term)? };
        }
        let (var, elem) = self.bufs[binding];
        let zero = self.int_const(DataType::INT32, 0)?;
        let ptr_t = self.cx.b.type_pointer(None, spirv::StorageClass::StorageBuffer, elem);
        let ptr = self.cx.b.access_chain(ptr_t, None, var, [zero, flat])?;
        Ok((ptr, elem))
    }

    /// The value of an integer constant made by [`Self::int_const`], if `w` is one.
    fn const_of(&self, w: Word) -> Option<i64> {
        self.cx.consts.iter().find(|(_, v)| **v == w).map(|((_, bits), _)| *bits as i64)
    }

    fn int_const(&mut self, dt: DataType, v: i64) -> R<Word> {
        let t = self.ty(dt)?;
        if dt.is_bool() {
            return Ok(self.cx.bool_const(v != 0));
        }
        let bits = if dt.bits == 64 { v as u64 } else { (v as u64) & 0xffff_ffff };
        Ok(self.cx.constant(t, bits, dt.bits == 64))
    }

    fn float_const(&mut self, dt: DataType, v: f64) -> R<Word> {
        let t = self.ty(dt)?;
        Ok(match dt.bits {
            32 => self.cx.constant(t, u64::from((v as f32).to_bits()), false),
            _ => self.cx.constant(t, v.to_bits(), true),
        })
    }

    /// A condition as a SPIR-V `bool`.
    fn cond(&mut self, e: PrimExpr) -> R<Word> {
        let v = self.expr(e)?;
        self.convert(v, self.f.pool.dtype(e), DataType::BOOL)
    }

    fn var(&mut self, v: SymVar) -> R<Word> {
        if let Some(&w) = self.ssa.get(&v) {
            return Ok(w);
        }
        let dt = self.f.pool.vars[v].dtype;
        if let Some(&slot) = self.loops.get(&v) {
            let t = self.ty(dt)?;
            return self.cx.b.load(t, None, slot, None, []).map_err(CodegenError::from);
        }
        if let (Some(push), Some(i)) = (self.push, self.gf.scalars.iter().position(|&x| x == v)) {
            let t = self.ty(dt)?;
            let p = self.cx.b.type_pointer(None, spirv::StorageClass::PushConstant, t);
            let idx = self.int_const(DataType::INT32, i as i64)?;
            let ptr = self.cx.b.access_chain(p, None, push, [idx])?;
            let w = self.cx.b.load(t, None, ptr, None, [])?;
            return Ok(w);
        }
        Err(self.err(format!("variable `{}` has no value in the GPU kernel", self.f.pool.vars[v].name)))
    }

    fn expr(&mut self, e: PrimExpr) -> R<Word> {
        let f = self.f;
        let dt = f.pool.dtype(e);
        match f.pool.prim(e) {
            PrimExprData::Int(_, v) => self.int_const(dt, *v),
            PrimExprData::Float(_, bits) => self.float_const(dt, bits.get()),
            PrimExprData::Str(_) => Err(self.err("string values are not supported in GPU kernels")),
            PrimExprData::Var(v) => self.var(*v),
            PrimExprData::Load { buffer, indices, .. } => {
                if dt.lanes != 1 {
                    return Err(self.err("vector loads are not supported by the SPIR-V backend"));
                }
                let (ptr, elem) = self.element(*buffer, indices)?;
                self.cx.b.load(elem, None, ptr, None, []).map_err(CodegenError::from)
            }
            PrimExprData::Bin(op, a, b) => {
                let adt = f.pool.dtype(*a);
                let (x, y) = (self.expr(*a)?, self.expr(*b)?);
                if op.is_compare() {
                    self.compare(*op, adt, x, y)
                } else if op.is_logical() {
                    let bt = self.cx.b.type_bool();
                    let x = self.convert(x, adt, DataType::BOOL)?;
                    let y = self.convert(y, f.pool.dtype(*b), DataType::BOOL)?;
                    match op {
                        BinOp::And => self.cx.b.logical_and(bt, None, x, y).map_err(CodegenError::from),
                        _ => self.cx.b.logical_or(bt, None, x, y).map_err(CodegenError::from),
                    }
                } else {
                    self.arith(*op, adt, x, y)
                }
            }
            PrimExprData::Not(a) => {
                let c = self.cond(*a)?;
                let bt = self.cx.b.type_bool();
                self.cx.b.logical_not(bt, None, c).map_err(CodegenError::from)
            }
            PrimExprData::Cast(t, a) => {
                let v = self.expr(*a)?;
                self.convert(v, f.pool.dtype(*a), *t)
            }
            PrimExprData::Select(c, a, b) => {
                let c = self.cond(*c)?;
                let (x, y) = (self.expr(*a)?, self.expr(*b)?);
                let t = self.ty(dt)?;
                self.cx.b.select(t, None, c, x, y).map_err(CodegenError::from)
            }
            PrimExprData::Call { op, args, .. } => match op {
                TirOp::Intrinsic(i) => self.call(dt, *i, args),
                TirOp::Other(name) => Err(self.err(format!("the op `{name}` is not supported by the SPIR-V backend"))),
            },
            PrimExprData::Let { var, value, body } => {
                let v = self.expr(*value)?;
                self.ssa.insert(*var, v);
                self.expr(*body)
            }
            PrimExprData::Ramp { .. } | PrimExprData::Broadcast { .. } => {
                Err(self.err("vector expressions are not supported by the SPIR-V backend"))
            }
        }
    }

    fn compare(&mut self, op: BinOp, dt: DataType, x: Word, y: Word) -> R<Word> {
        let bt = self.cx.b.type_bool();
        let b = &mut self.cx.b;
        let r = if dt.is_float() {
            match op {
                BinOp::Eq => b.f_ord_equal(bt, None, x, y),
                BinOp::Ne => b.f_unord_not_equal(bt, None, x, y),
                BinOp::Lt => b.f_ord_less_than(bt, None, x, y),
                BinOp::Le => b.f_ord_less_than_equal(bt, None, x, y),
                BinOp::Gt => b.f_ord_greater_than(bt, None, x, y),
                _ => b.f_ord_greater_than_equal(bt, None, x, y),
            }
        } else if dt.is_bool() {
            match op {
                BinOp::Eq => b.logical_equal(bt, None, x, y),
                BinOp::Ne => b.logical_not_equal(bt, None, x, y),
                _ => return Err(self.err("ordered comparison of booleans is not supported")),
            }
        } else if dt.is_uint() {
            match op {
                BinOp::Eq => b.i_equal(bt, None, x, y),
                BinOp::Ne => b.i_not_equal(bt, None, x, y),
                BinOp::Lt => b.u_less_than(bt, None, x, y),
                BinOp::Le => b.u_less_than_equal(bt, None, x, y),
                BinOp::Gt => b.u_greater_than(bt, None, x, y),
                _ => b.u_greater_than_equal(bt, None, x, y),
            }
        } else {
            match op {
                BinOp::Eq => b.i_equal(bt, None, x, y),
                BinOp::Ne => b.i_not_equal(bt, None, x, y),
                BinOp::Lt => b.s_less_than(bt, None, x, y),
                BinOp::Le => b.s_less_than_equal(bt, None, x, y),
                BinOp::Gt => b.s_greater_than(bt, None, x, y),
                _ => b.s_greater_than_equal(bt, None, x, y),
            }
        };
        r.map_err(CodegenError::from)
    }

    fn arith(&mut self, op: BinOp, dt: DataType, x: Word, y: Word) -> R<Word> {
        let t = self.ty(dt)?;
        if dt.is_float() {
            return self.float_arith(op, dt, t, x, y);
        }
        if dt.is_bool() {
            return Err(self.err(format!("arithmetic `{}` on booleans is not supported", op.node_name())));
        }
        let bt = self.cx.b.type_bool();
        let zero = self.int_const(dt, 0)?;
        let one = self.int_const(dt, 1)?;
        let b = &mut self.cx.b;
        let signed = !dt.is_uint();
        let r = match op {
            BinOp::Add => b.i_add(t, None, x, y),
            BinOp::Sub => b.i_sub(t, None, x, y),
            BinOp::Mul => b.i_mul(t, None, x, y),
            BinOp::Div if signed => b.s_div(t, None, x, y),
            BinOp::Div => b.u_div(t, None, x, y),
            BinOp::Mod if signed => b.s_rem(t, None, x, y),
            BinOp::Mod => b.u_mod(t, None, x, y),
            BinOp::FloorDiv if !signed => b.u_div(t, None, x, y),
            BinOp::FloorMod if !signed => b.u_mod(t, None, x, y),
            BinOp::FloorDiv => {
                // q = x / y (truncated), minus one when the remainder needs a fix.
                (|| {
                    let q = b.s_div(t, None, x, y)?;
                    let r = b.s_rem(t, None, x, y)?;
                    let fix = floor_fix(b, bt, zero, r, y)?;
                    let qm = b.i_sub(t, None, q, one)?;
                    b.select(t, None, fix, qm, q)
                })()
            }
            BinOp::FloorMod => (|| {
                let r = b.s_rem(t, None, x, y)?;
                let fix = floor_fix(b, bt, zero, r, y)?;
                let ry = b.i_add(t, None, r, y)?;
                b.select(t, None, fix, ry, r)
            })(),
            BinOp::Min | BinOp::Max => (|| {
                let c = match (op, signed) {
                    (BinOp::Min, true) => b.s_less_than(bt, None, x, y)?,
                    (BinOp::Min, false) => b.u_less_than(bt, None, x, y)?,
                    (_, true) => b.s_greater_than(bt, None, x, y)?,
                    (_, false) => b.u_greater_than(bt, None, x, y)?,
                };
                b.select(t, None, c, x, y)
            })(),
            _ => return Err(self.err(format!("operator `{}` is not arithmetic", op.node_name()))),
        };
        r.map_err(CodegenError::from)
    }

    fn float_arith(&mut self, op: BinOp, dt: DataType, t: Word, x: Word, y: Word) -> R<Word> {
        let bt = self.cx.b.type_bool();
        let glsl = self.cx.glsl;
        let wide = dt.bits == 64;
        let b = &mut self.cx.b;
        let r = match op {
            BinOp::Add => b.f_add(t, None, x, y),
            BinOp::Sub => b.f_sub(t, None, x, y),
            BinOp::Mul => b.f_mul(t, None, x, y),
            BinOp::Div => b.f_div(t, None, x, y),
            BinOp::Mod => b.f_rem(t, None, x, y),
            BinOp::FloorDiv | BinOp::FloorMod if wide => {
                return Err(self.err("floor division of float64 is not supported by the SPIR-V backend"));
            }
            BinOp::FloorDiv => (|| {
                let q = b.f_div(t, None, x, y)?;
                b.ext_inst(t, None, glsl, glsl::FLOOR, [Operand::IdRef(q)])
            })(),
            BinOp::FloorMod => (|| {
                let q = b.f_div(t, None, x, y)?;
                let fq = b.ext_inst(t, None, glsl, glsl::FLOOR, [Operand::IdRef(q)])?;
                let p = b.f_mul(t, None, fq, y)?;
                b.f_sub(t, None, x, p)
            })(),
            // The interpreter's `if x < y { x } else { y }` (and `>` for max).
            BinOp::Min => (|| {
                let c = b.f_ord_less_than(bt, None, x, y)?;
                b.select(t, None, c, x, y)
            })(),
            BinOp::Max => (|| {
                let c = b.f_ord_greater_than(bt, None, x, y)?;
                b.select(t, None, c, x, y)
            })(),
            _ => return Err(self.err(format!("operator `{}` is not arithmetic", op.node_name()))),
        };
        r.map_err(CodegenError::from)
    }

    /// Converts `v` from `from` to `to` (TVM's `Cast` semantics).
    fn convert(&mut self, v: Word, from: DataType, to: DataType) -> R<Word> {
        if from == to {
            return Ok(v);
        }
        let t = self.ty(to)?;
        if to.is_bool() {
            let zero = if from.is_float() { self.float_const(from, 0.0)? } else { self.int_const(from, 0)? };
            return self.compare(BinOp::Ne, from, v, zero);
        }
        if from.is_bool() {
            let (one, zero) = if to.is_float() {
                (self.float_const(to, 1.0)?, self.float_const(to, 0.0)?)
            } else {
                (self.int_const(to, 1)?, self.int_const(to, 0)?)
            };
            return self.cx.b.select(t, None, v, one, zero).map_err(CodegenError::from);
        }
        let b = &mut self.cx.b;
        let r = match (from.is_float(), to.is_float()) {
            (true, true) => b.f_convert(t, None, v),
            (true, false) if to.is_uint() => b.convert_f_to_u(t, None, v),
            (true, false) => b.convert_f_to_s(t, None, v),
            (false, true) if from.is_uint() => b.convert_u_to_f(t, None, v),
            (false, true) => b.convert_s_to_f(t, None, v),
            (false, false) if from.bits == to.bits => b.bitcast(t, None, v),
            (false, false) if from.is_uint() => b.u_convert(t, None, v),
            (false, false) => {
                // Sign-extend or truncate, then reinterpret for the target's signedness.
                let st = b.type_int(to.bits as u32, 1);
                let w = b.s_convert(st, None, v)?;
                if to.is_uint() { b.bitcast(t, None, w) } else { Ok(w) }
            }
        };
        r.map_err(CodegenError::from)
    }

    fn call(&mut self, dt: DataType, op: Intrinsic, args: &[PrimExpr]) -> R<Word> {
        let name = op;
        let f = self.f;
        match name {
            Intrinsic::IfThenElse if args.len() == 3 => return self.if_then_else(dt, args),
            Intrinsic::Likely | Intrinsic::Assume if args.len() == 1 => return self.expr(args[0]),
            _ => {}
        }
        let t = self.ty(dt)?;
        if !dt.is_float() {
            if matches!(name, Intrinsic::Abs | Intrinsic::Fabs) && args.len() == 1 && dt.is_int() {
                let x = self.expr(args[0])?;
                let glsl = self.cx.glsl;
                return self.cx.b.ext_inst(t, None, glsl, glsl::SABS, [Operand::IdRef(x)]).map_err(CodegenError::from);
            }
            if args.len() == 1 && matches!(f.pool.dtype(args[0]), d if d.is_float()) {
                let x = self.expr(args[0])?;
                let bt = self.cx.b.type_bool();
                let r = match name {
                    Intrinsic::Isnan => self.cx.b.is_nan(bt, None, x),
                    Intrinsic::Isinf => self.cx.b.is_inf(bt, None, x),
                    Intrinsic::Isfinite => (|| {
                        let n = self.cx.b.is_nan(bt, None, x)?;
                        let i = self.cx.b.is_inf(bt, None, x)?;
                        let o = self.cx.b.logical_or(bt, None, n, i)?;
                        self.cx.b.logical_not(bt, None, o)
                    })(),
                    _ => return Err(self.err(format!("intrinsic `{op}` is not supported by the SPIR-V backend"))),
                };
                let r = r?;
                return self.convert(r, DataType::BOOL, dt);
            }
            return Err(self.err(format!("intrinsic `{op}` is not supported by the SPIR-V backend")));
        }
        if dt.bits != 32
            && !matches!(
                name,
                Intrinsic::Sqrt
                    | Intrinsic::Fabs
                    | Intrinsic::Abs
                    | Intrinsic::Floor
                    | Intrinsic::Ceil
                    | Intrinsic::Trunc
                    | Intrinsic::Round
                    | Intrinsic::Nearbyint
            )
        {
            return Err(self.err(format!("intrinsic `{op}` on `{dt}` is not supported by the SPIR-V backend")));
        }
        let vals: Vec<Word> = args.iter().map(|&a| self.expr(a)).collect::<R<_>>()?;
        let glsl = self.cx.glsl;
        let one = self.float_const(dt, 1.0)?;
        let unary = |fx: &mut Self, inst: u32, x: Word| fx.cx.b.ext_inst(t, None, glsl, inst, [Operand::IdRef(x)]);
        let inst1 = match name {
            Intrinsic::Exp => Some(glsl::EXP),
            Intrinsic::Exp2 => Some(glsl::EXP2),
            Intrinsic::Log => Some(glsl::LOG),
            Intrinsic::Log2 => Some(glsl::LOG2),
            Intrinsic::Sqrt => Some(glsl::SQRT),
            Intrinsic::Rsqrt => Some(glsl::INVERSE_SQRT),
            Intrinsic::Tanh => Some(glsl::TANH),
            Intrinsic::Fabs | Intrinsic::Abs => Some(glsl::FABS),
            Intrinsic::Floor => Some(glsl::FLOOR),
            Intrinsic::Ceil => Some(glsl::CEIL),
            Intrinsic::Round | Intrinsic::Nearbyint => Some(glsl::ROUND_EVEN),
            Intrinsic::Trunc => Some(glsl::TRUNC),
            Intrinsic::Sin => Some(glsl::SIN),
            Intrinsic::Cos => Some(glsl::COS),
            Intrinsic::Tan => Some(glsl::TAN),
            Intrinsic::Asin => Some(glsl::ASIN),
            Intrinsic::Acos => Some(glsl::ACOS),
            Intrinsic::Atan => Some(glsl::ATAN),
            Intrinsic::Sinh => Some(glsl::SINH),
            Intrinsic::Cosh => Some(glsl::COSH),
            Intrinsic::Asinh => Some(glsl::ASINH),
            Intrinsic::Acosh => Some(glsl::ACOSH),
            Intrinsic::Atanh => Some(glsl::ATANH),
            _ => None,
        };
        if let (Some(inst), [x]) = (inst1, vals.as_slice()) {
            return unary(self, inst, *x).map_err(CodegenError::from);
        }
        match (name, vals.as_slice()) {
            (Intrinsic::Sigmoid, [x]) => {
                let n = self.cx.b.f_negate(t, None, *x)?;
                let e = unary(self, glsl::EXP, n)?;
                let d = self.cx.b.f_add(t, None, one, e)?;
                self.cx.b.f_div(t, None, one, d).map_err(CodegenError::from)
            }
            (Intrinsic::Log1p, [x]) => {
                let s = self.cx.b.f_add(t, None, one, *x)?;
                unary(self, glsl::LOG, s).map_err(CodegenError::from)
            }
            (Intrinsic::Expm1, [x]) => {
                let e = unary(self, glsl::EXP, *x)?;
                self.cx.b.f_sub(t, None, e, one).map_err(CodegenError::from)
            }
            (Intrinsic::Erf, [x]) => self.erf(t, dt, *x),
            (Intrinsic::Pow, [x, y]) => self
                .cx
                .b
                .ext_inst(t, None, glsl, glsl::POW, [Operand::IdRef(*x), Operand::IdRef(*y)])
                .map_err(CodegenError::from),
            (Intrinsic::Atan2, [x, y]) => {
                Ok(self.cx.b.ext_inst(t, None, glsl, glsl::ATAN2, [Operand::IdRef(*x), Operand::IdRef(*y)])?)
            }
            (Intrinsic::Fmod, [x, y]) => Ok(self.cx.b.f_rem(t, None, *x, *y)?),
            _ => Err(self.err(format!("intrinsic `{op}` is not supported by the SPIR-V backend"))),
        }
    }

    /// `erf` by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7), with the sign
    /// of `x`.
    fn erf(&mut self, t: Word, dt: DataType, x: Word) -> R<Word> {
        let glsl = self.cx.glsl;
        let c = |fx: &mut Self, v: f64| fx.float_const(dt, v);
        let (p, a1, a2, a3, a4, a5) = (
            c(self, 0.3275911)?,
            c(self, 0.254829592)?,
            c(self, -0.284496736)?,
            c(self, 1.421413741)?,
            c(self, -1.453152027)?,
            c(self, 1.061405429)?,
        );
        let one = c(self, 1.0)?;
        let zero = c(self, 0.0)?;
        let bt = self.cx.b.type_bool();
        let b = &mut self.cx.b;
        let r = (|| {
            let ax = b.ext_inst(t, None, glsl, glsl::FABS, [Operand::IdRef(x)])?;
            let px = b.f_mul(t, None, p, ax)?;
            let d = b.f_add(t, None, one, px)?;
            let tt = b.f_div(t, None, one, d)?;
            let mut poly = a5;
            for a in [a4, a3, a2, a1] {
                let m = b.f_mul(t, None, poly, tt)?;
                poly = b.f_add(t, None, m, a)?;
            }
            let poly = b.f_mul(t, None, poly, tt)?;
            let x2 = b.f_mul(t, None, ax, ax)?;
            let nx2 = b.f_negate(t, None, x2)?;
            let e = b.ext_inst(t, None, glsl, glsl::EXP, [Operand::IdRef(nx2)])?;
            let pe = b.f_mul(t, None, poly, e)?;
            let y = b.f_sub(t, None, one, pe)?;
            let neg = b.f_ord_less_than(bt, None, x, zero)?;
            let ny = b.f_negate(t, None, y)?;
            b.select(t, None, neg, ny, y)
        })();
        Ok(r?)
    }

    /// `T.if_then_else(c, a, b)`: only the branch taken is evaluated (it may read out of
    /// bounds otherwise).
    fn if_then_else(&mut self, dt: DataType, args: &[PrimExpr]) -> R<Word> {
        let c = self.cond(args[0])?;
        let t = self.ty(dt)?;
        let (tb, eb, merge) = (self.cx.b.id(), self.cx.b.id(), self.cx.b.id());
        self.cx.b.selection_merge(merge, spirv::SelectionControl::NONE)?;
        self.cx.b.branch_conditional(c, tb, eb, [])?;
        self.block(tb)?;
        let a = self.expr(args[1])?;
        let a = self.convert(a, self.f.pool.dtype(args[1]), dt)?;
        let a_from = self.cur;
        self.cx.b.branch(merge)?;
        self.block(eb)?;
        let b = self.expr(args[2])?;
        let b = self.convert(b, self.f.pool.dtype(args[2]), dt)?;
        let b_from = self.cur;
        self.cx.b.branch(merge)?;
        self.block(merge)?;
        self.cx.b.phi(t, None, [(a, a_from), (b, b_from)]).map_err(CodegenError::from)
    }
}

/// Whether the truncated remainder `r` of a signed division by `y` differs from the
/// floored one (it is non-zero and its sign is not `y`'s): then floor division is the
/// truncated quotient minus one and floor modulo is `r + y`. `bt` is the boolean type,
/// `zero` the zero of the operands' type.
fn floor_fix(b: &mut Builder, bt: Word, zero: Word, r: Word, y: Word) -> Result<Word, rspirv::dr::Error> {
    let nz = b.i_not_equal(bt, None, r, zero)?;
    let rn = b.s_less_than(bt, None, r, zero)?;
    let yn = b.s_less_than(bt, None, y, zero)?;
    let diff = b.logical_not_equal(bt, None, rn, yn)?;
    b.logical_and(bt, None, nz, diff)
}
