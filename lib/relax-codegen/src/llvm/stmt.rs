//! Statements of lowered TIR (`relax_ir::tir_lower`): loops of every kind, stores, `if`,
//! `while`, `let`, `assert`, attributes, allocations and buffer declarations, with the
//! interpreter's semantics. A block is an internal error (the callers lower first).
//!
//! * A serial loop keeps an `i64` counter in a `phi`; `T.unroll` loops with a constant
//!   extent of at most [`MAX_UNROLL`] are unrolled here, the body emitted once per value;
//!   vectorized loops are plain loops that LLVM's vectorizer picks up; thread bindings
//!   and `thread_extent` attributes run serially; parallel loops go to [`super::outline`].
//! * Allocations are zero-filled, as the interpreter's: a constant size of at most
//!   [`MAX_STACK`] bytes is a stack slot in the function's entry block (so LLVM can keep
//!   small accumulators in registers), anything else comes from `calloc` and is freed
//!   when its scope ends.

use inkwell::values::{IntValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use relax_ir::{AttrNode, Buffer, ForKind, PrimExprData, Stmt, StmtData, SymVar};

use super::{BufInfo, Fx, R, ffi};

/// The largest constant trip count of a `T.unroll` loop that is unrolled in place.
pub(super) const MAX_UNROLL: i64 = 64;
/// The largest constant trip count of a `T.vectorized` loop that is unrolled in place,
/// for the SLP vectorizer to pack (register tiles); longer ones are left to the loop
/// vectorizer.
pub(super) const MAX_VECTOR_UNROLL: i64 = 64;
/// The largest allocation that lives on the stack (packed matmul panels are up to 256
/// KiB): callers give kernels at least [`super::KERNEL_STACK`] bytes of stack.
const MAX_STACK: u64 = 512 * 1024;

impl<'ctx> Fx<'_, '_, 'ctx> {
    /// Lowers a statement.
    pub(super) fn exec(&mut self, s: Stmt) -> R<()> {
        let span = *self.sh.f.spans.stmts.get(s);
        let outer = self.sh.at.get();
        if !span.is_none() {
            self.sh.at.set(span);
        }
        let r = stacker::maybe_grow(64 * 1024, 2 * 1024 * 1024, || self.exec_inner(s)).map_err(|e| e.or_at(span));
        self.sh.at.set(outer);
        r
    }

    fn exec_inner(&mut self, s: Stmt) -> R<()> {
        let f = self.sh.f;
        match &f.stmts[s] {
            StmtData::Seq(v) => {
                for &x in v {
                    self.exec(x)?;
                }
                Ok(())
            }
            StmtData::For { var, min, extent, kind, step, body, .. } => {
                let (var, min, extent, kind, step, body) = (*var, *min, *extent, *kind, *step, *body);
                if kind == ForKind::Parallel && !self.in_parallel && step.is_none() {
                    return self.parallel_loop(var, min, extent, body);
                }
                if matches!(kind, ForKind::Unrolled | ForKind::Vectorized) && step.is_none() {
                    let limit = if kind == ForKind::Unrolled { MAX_UNROLL } else { MAX_VECTOR_UNROLL };
                    let (lo, n) = (f.pool.as_int(min), f.pool.as_int(extent));
                    if let (Some(lo), Some(n)) = (lo, n)
                        && (0..=limit).contains(&n)
                    {
                        if kind == ForKind::Vectorized
                            && (self.dot_loop(var, lo, n as u32, body)? || self.vector_loop(var, lo, n as u32, body)?)
                        {
                            return Ok(());
                        }
                        let dt = f.pool.vars[var].dtype;
                        for k in 0..n {
                            let v = self.cast(self.i64c(lo + k).into(), relax_ir::DataType::INT64, dt)?;
                            self.bind_var(var, v);
                            self.exec(body)?;
                        }
                        return Ok(());
                    }
                }
                let lo = self.eval_i64(min)?;
                let ext = self.eval_i64(extent)?;
                let end = self.b.build_int_nsw_add(lo, ext, "end")?;
                let step = match step {
                    Some(st) => Some(self.eval_i64(st)?),
                    None => None,
                };
                self.serial_loop(var, lo, end, step, |fx| fx.exec(body))
            }
            StmtData::Block(_) => Err(crate::error::not_lowered(self.sh.name)),
            StmtData::Store { buffer, indices, value } => self.store(*buffer, indices, *value),
            StmtData::If { cond, then_branch, else_branch } => {
                let c = self.eval_cond(*cond)?;
                let then_bb = self.sh.cx.append_basic_block(self.func, "if");
                let done = self.sh.cx.append_basic_block(self.func, "endif");
                let else_bb =
                    if else_branch.is_some() { self.sh.cx.append_basic_block(self.func, "else") } else { done };
                self.b.build_conditional_branch(c, then_bb, else_bb)?;
                self.b.position_at_end(then_bb);
                self.exec(*then_branch)?;
                self.b.build_unconditional_branch(done)?;
                if let Some(e) = else_branch {
                    self.b.position_at_end(else_bb);
                    self.exec(*e)?;
                    self.b.build_unconditional_branch(done)?;
                }
                self.b.position_at_end(done);
                Ok(())
            }
            StmtData::While { cond, body } => {
                let head = self.sh.cx.append_basic_block(self.func, "while");
                let body_bb = self.sh.cx.append_basic_block(self.func, "wbody");
                let done = self.sh.cx.append_basic_block(self.func, "endwhile");
                self.b.build_unconditional_branch(head)?;
                self.b.position_at_end(head);
                let c = self.eval_cond(*cond)?;
                self.b.build_conditional_branch(c, body_bb, done)?;
                self.b.position_at_end(body_bb);
                self.exec(*body)?;
                self.b.build_unconditional_branch(head)?;
                self.b.position_at_end(done);
                Ok(())
            }
            StmtData::Let { var, value, body } => {
                let dt = f.pool.vars[*var].dtype;
                let v = if dt.is_handle() { self.eval(*value)?.0 } else { self.eval_as(*value, dt)? };
                self.bind_var(*var, v);
                self.exec(*body)
            }
            StmtData::Evaluate(e) => {
                self.eval(*e)?;
                Ok(())
            }
            StmtData::Assert { cond, message, body } => {
                let c = self.eval_cond(*cond)?;
                let msg = match f.pool.prim(*message) {
                    PrimExprData::Str(s) => s.clone(),
                    _ => "assertion failed".to_string(),
                };
                let bad = self.b.build_not(c, "bad")?;
                self.fail_if(bad, format!("PrimFunc `{}`: assertion failed: {msg}", self.sh.name))?;
                self.exec(*body)
            }
            StmtData::Attr { node, key, value, body } => {
                if matches!(key.as_str(), "thread_extent" | "virtual_thread")
                    && let AttrNode::Expr(e) = node
                    && let Some(v) = f.pool.as_var(*e)
                {
                    let ext = self.eval_i64(*value)?;
                    let zero = self.i64c(0);
                    return self.serial_loop(v, zero, ext, None, |fx| fx.exec(*body));
                }
                self.exec(*body)
            }
            StmtData::DeclBuffer { buffer, body } => {
                let data = f.buffer(*buffer).data;
                let heap = match self.data.get(&data).copied() {
                    Some(p) => {
                        self.bind_view(*buffer, p)?;
                        None
                    }
                    None => self.alloc(*buffer, true)?,
                };
                self.exec(*body)?;
                self.free(heap)
            }
            StmtData::Allocate { buffer, body } => {
                let zero = !super::fill::overwritten_first(f, *buffer, *body);
                let heap = self.alloc(*buffer, zero)?;
                self.exec(*body)?;
                self.free(heap)
            }
        }
    }

    /// A loop `for var in [lo, end)` (by `step` when given: while `var < end` for a
    /// positive step, `var > end` for a negative one).
    pub(super) fn serial_loop(
        &mut self,
        var: SymVar,
        lo: IntValue<'ctx>,
        end: IntValue<'ctx>,
        step: Option<IntValue<'ctx>>,
        mut body: impl FnMut(&mut Self) -> R<()>,
    ) -> R<()> {
        let cx = self.sh.cx;
        let i64t = cx.i64_type();
        let pre = self.b.get_insert_block().expect("positioned");
        let head = cx.append_basic_block(self.func, "for");
        let body_bb = cx.append_basic_block(self.func, "body");
        let done = cx.append_basic_block(self.func, "endfor");
        self.b.build_unconditional_branch(head)?;
        self.b.position_at_end(head);
        let phi = self.b.build_phi(i64t, "i")?;
        let i = phi.as_basic_value().into_int_value();
        let cond = match step {
            None => self.b.build_int_compare(IntPredicate::SLT, i, end, "c")?,
            Some(st) => {
                let zero = i64t.const_zero();
                let pos = self.b.build_int_compare(IntPredicate::SGT, st, zero, "pos")?;
                let lt = self.b.build_int_compare(IntPredicate::SLT, i, end, "lt")?;
                let gt = self.b.build_int_compare(IntPredicate::SGT, i, end, "gt")?;
                let neg = self.b.build_int_compare(IntPredicate::SLT, st, zero, "neg")?;
                let a = self.b.build_and(pos, lt, "a")?;
                let c = self.b.build_and(neg, gt, "b")?;
                self.b.build_or(a, c, "c")?
            }
        };
        self.b.build_conditional_branch(cond, body_bb, done)?;
        self.b.position_at_end(body_bb);
        let dt = self.sh.f.pool.vars[var].dtype;
        let v = self.cast(i.into(), relax_ir::DataType::INT64, dt)?;
        self.bind_var(var, v);
        body(self)?;
        let next = self.b.build_int_nsw_add(i, step.unwrap_or_else(|| i64t.const_int(1, false)), "inext")?;
        let latch = self.b.get_insert_block().expect("positioned");
        self.b.build_unconditional_branch(head)?;
        phi.add_incoming(&[(&lo, pre), (&next, latch)]);
        self.b.position_at_end(done);
        Ok(())
    }

    /// The strides of a buffer in elements: its declared strides, or row-major from its
    /// shape.
    pub(super) fn strides_of(&mut self, b: Buffer, declared: bool) -> R<Vec<IntValue<'ctx>>> {
        let bd = self.sh.f.buffer(b);
        if declared && !bd.strides.is_empty() {
            let mut v = Vec::with_capacity(bd.strides.len());
            for &s in &bd.strides {
                v.push(self.eval_i64(s)?);
            }
            return Ok(v);
        }
        let mut dims = Vec::with_capacity(bd.shape.len());
        for &d in &bd.shape {
            dims.push(self.eval_i64(d)?);
        }
        self.row_major(&dims)
    }

    /// The dims of `b` when accesses are checked, else nothing.
    fn checked_dims(&mut self, b: Buffer) -> R<Vec<IntValue<'ctx>>> {
        if !self.sh.check_bounds {
            return Ok(Vec::new());
        }
        let shape = self.sh.f.buffer(b).shape.clone();
        shape.iter().map(|&d| self.eval_i64(d)).collect()
    }

    fn row_major(&self, dims: &[IntValue<'ctx>]) -> R<Vec<IntValue<'ctx>>> {
        let mut s = vec![self.i64c(1); dims.len()];
        for i in (0..dims.len().saturating_sub(1)).rev() {
            s[i] = self.b.build_int_nsw_mul(s[i + 1], dims[i + 1], "st")?;
        }
        Ok(s)
    }

    /// Binds a parameter buffer to the address of its element 0.
    pub(super) fn bind_param_buffer(&mut self, b: Buffer, ptr: PointerValue<'ctx>) -> R<()> {
        let strides = self.strides_of(b, true)?;
        let dims = self.checked_dims(b)?;
        let bd = self.sh.f.buffer(b);
        self.data.insert(bd.data, ptr);
        self.bufs.insert(b, BufInfo { ptr, strides, dtype: bd.dtype, dims, distinct: true });
        Ok(())
    }

    /// Binds a declared buffer as a view of `data` plus its element offset.
    fn bind_view(&mut self, b: Buffer, data: PointerValue<'ctx>) -> R<()> {
        let strides = self.strides_of(b, true)?;
        let dims = self.checked_dims(b)?;
        let bd = self.sh.f.buffer(b);
        let ptr = match bd.elem_offset {
            Some(off) => {
                let o = self.eval_i64(off)?;
                let bytes = self.b.build_int_nsw_mul(o, self.i64c(bd.dtype.bytes() as i64), "off")?;
                ffi::byte_ptr(&self.b, self.sh.cx.i8_type().into(), data, bytes)?
            }
            None => data,
        };
        self.bufs.insert(b, BufInfo { ptr, strides, dtype: bd.dtype, dims, distinct: false });
        Ok(())
    }

    /// Allocates a buffer, zero-filled unless `zero` is false (its scope overwrites it
    /// first: [`super::fill`]); returns the pointer to free when it is on the heap.
    pub(super) fn alloc(&mut self, b: Buffer, zero: bool) -> R<Option<PointerValue<'ctx>>> {
        let f = self.sh.f;
        let bd = f.buffer(b);
        let mut dims = Vec::with_capacity(bd.shape.len());
        let mut konst: Option<u64> = Some(1);
        for &d in &bd.shape {
            let v = self.eval_i64(d)?;
            match v.get_sign_extended_constant() {
                Some(c) if c >= 0 => konst = konst.map(|k| k.saturating_mul(c as u64)),
                _ => {
                    konst = None;
                    let neg = self.b.build_int_compare(IntPredicate::SLT, v, self.i64c(0), "negdim")?;
                    let msg =
                        format!("PrimFunc `{}`: buffer `{}` is allocated with a negative dim", self.sh.name, bd.name);
                    self.fail_if(neg, msg)?;
                }
            }
            dims.push(v);
        }
        let elem = bd.dtype.bytes().max(1);
        let cx = self.sh.cx;
        let (ptr, heap) = match konst.map(|k| k.saturating_mul(elem)) {
            Some(bytes) if bytes <= MAX_STACK => {
                // A stack slot in the entry block, cleared where the buffer comes into scope.
                let here = self.b.get_insert_block().expect("positioned");
                match self.entry.get_first_instruction() {
                    Some(i) => self.b.position_before(&i),
                    None => self.b.position_at_end(self.entry),
                }
                let ty = cx.i8_type().array_type(bytes.max(1) as u32);
                let slot = self.b.build_alloca(ty, &bd.name)?;
                if let Some(inst) = slot.as_instruction() {
                    let _ = inst.set_alignment(64);
                }
                self.b.position_at_end(here);
                if zero {
                    self.b.build_memset(slot, 64, cx.i8_type().const_zero(), cx.i64_type().const_int(bytes, false))?;
                }
                (slot, None)
            }
            _ if self.sh.device.is_some() => {
                let msg = format!("buffer `{}` is too large for a thread's memory on the GPU", bd.name);
                return Err(self.err(&msg));
            }
            _ => {
                let mut n = self.i64c(elem as i64);
                for &d in &dims {
                    n = self.b.build_int_nsw_mul(n, d, "sz")?;
                }
                let i64t = cx.i64_type();
                let ptr_t = cx.ptr_type(AddressSpace::default());
                let calloc = self.extern_fn("calloc", ptr_t.into(), &[i64t.into(), i64t.into()], false);
                let p = self.b.build_call(calloc, &[n.into(), i64t.const_int(1, false).into()], "heap")?;
                let p = p.try_as_basic_value().basic().expect("calloc returns a pointer").into_pointer_value();
                (p, Some(p))
            }
        };
        let strides = self.row_major(&dims)?;
        self.data.insert(bd.data, ptr);
        let dims = if self.sh.check_bounds { dims } else { Vec::new() };
        self.bufs.insert(b, BufInfo { ptr, strides, dtype: bd.dtype, dims, distinct: true });
        Ok(heap)
    }

    /// Frees a heap allocation.
    pub(super) fn free(&mut self, heap: Option<PointerValue<'ctx>>) -> R<()> {
        if let Some(p) = heap {
            let cx = self.sh.cx;
            let pt = cx.ptr_type(AddressSpace::default());
            let free = self.sh.module.get_function("free").unwrap_or_else(|| {
                self.sh.module.add_function("free", cx.void_type().fn_type(&[pt.into()], false), None)
            });
            self.b.build_call(free, &[p.into()], "")?;
        }
        Ok(())
    }
}
