//! Parallel loops: the body of a `T.parallel` loop becomes a function of its own, run on
//! chunks of the iteration space by the runtime's [`super::PARALLEL_FOR`].
//!
//! For `for i in T.parallel(lo, lo + n)` in PrimFunc `f`, the code generator makes
//!
//! * `i32 f_parK_body(<captures>, i64 begin, i64 end)`: the loop over `[lo + begin,
//!   lo + end)`, with every value the body uses from outside as a parameter (buffer
//!   pointers `noalias` when `f` promises `tirx.noalias`, so vectorization keeps working);
//! * `i32 f_parK(ptr closure, i64 begin, i64 end)`: reads the captures from the closure,
//!   an array of 8-byte slots, and calls the body;
//!
//! and calls `relax_parallel_for(f_parK, closure, n, min_chunk)` where the loop was. A
//! chunk is at least `min_chunk` iterations, estimated from the body's size so that a
//! task does some 20,000 operations. A parallel loop inside an outlined body runs
//! serially. A non-zero result (a run-time error) is returned from the caller.

use std::collections::{BTreeSet, HashMap};

use inkwell::AddressSpace;
use inkwell::IntPredicate;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::module::Linkage;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, PointerValue};
use relax_entity::EntityRef;
use relax_ir::{AttrNode, Buffer, DataType, PrimExpr, PrimExprData, PrimFunc, Stmt, StmtData, SymVar};

use super::{BufInfo, Fx, R, Shared, ffi};

/// The variables and buffers a statement uses, and those it defines.
#[derive(Default)]
struct Uses {
    vars: BTreeSet<u32>,
    bufs: BTreeSet<u32>,
    defined_vars: BTreeSet<u32>,
    defined_bufs: BTreeSet<u32>,
}

impl Uses {
    fn expr(&mut self, f: &PrimFunc, e: PrimExpr) {
        let mut stack = vec![e];
        let mut seen = std::collections::HashSet::new();
        while let Some(e) = stack.pop() {
            if !seen.insert(e) {
                continue;
            }
            match f.pool.prim(e) {
                PrimExprData::Var(v) => {
                    self.vars.insert(v.index() as u32);
                }
                PrimExprData::Load { buffer, .. } => {
                    self.bufs.insert(buffer.index() as u32);
                }
                PrimExprData::Let { var, .. } => {
                    self.defined_vars.insert(var.index() as u32);
                }
                _ => {}
            }
            f.pool.for_each_operand(e, |o| stack.push(o));
        }
    }

    fn define_buffer(&mut self, f: &PrimFunc, b: Buffer) {
        self.defined_bufs.insert(b.index() as u32);
        let bd = f.buffer(b);
        self.defined_vars.insert(bd.data.index() as u32);
        for &e in bd.shape.iter().chain(&bd.strides).chain(bd.elem_offset.iter()) {
            self.expr(f, e);
        }
    }

    fn stmt(&mut self, f: &PrimFunc, root: Stmt) {
        f.walk(root, |_, data| match data {
            StmtData::Seq(_) => {}
            StmtData::For { var, min, extent, step, .. } => {
                self.defined_vars.insert(var.index() as u32);
                self.expr(f, *min);
                self.expr(f, *extent);
                if let Some(s) = step {
                    self.expr(f, *s);
                }
            }
            // Lowered TIR has no blocks; `exec` reports one.
            StmtData::Block(_) => {}
            StmtData::Store { buffer, indices, value } => {
                self.bufs.insert(buffer.index() as u32);
                for &i in indices {
                    self.expr(f, i);
                }
                self.expr(f, *value);
            }
            StmtData::If { cond, .. } | StmtData::While { cond, .. } => self.expr(f, *cond),
            StmtData::Let { var, value, .. } => {
                self.defined_vars.insert(var.index() as u32);
                self.expr(f, *value);
            }
            StmtData::Evaluate(e) => self.expr(f, *e),
            StmtData::Assert { cond, .. } => self.expr(f, *cond),
            StmtData::Attr { node, value, .. } => {
                self.expr(f, *value);
                if let AttrNode::Expr(e) = node {
                    match f.pool.as_var(*e) {
                        Some(v) => {
                            self.defined_vars.insert(v.index() as u32);
                        }
                        None => self.expr(f, *e),
                    }
                }
            }
            StmtData::DeclBuffer { buffer, .. } => {
                self.vars.insert(f.buffer(*buffer).data.index() as u32);
                let data = f.buffer(*buffer).data;
                self.define_buffer(f, *buffer);
                // The data pointer of a view comes from outside.
                self.defined_vars.remove(&(data.index() as u32));
            }
            StmtData::Allocate { buffer, .. } => self.define_buffer(f, *buffer),
        });
    }
}

/// A rough count of the operations one execution of `s` does.
fn cost(f: &PrimFunc, s: Stmt) -> u64 {
    match &f.stmts[s] {
        StmtData::Seq(v) => v.iter().map(|&x| cost(f, x)).sum::<u64>().max(1),
        StmtData::For { extent, body, .. } => {
            let n = f.pool.as_int(*extent).map_or(64, |n| n.max(0) as u64);
            n.saturating_mul(cost(f, *body))
        }
        StmtData::If { then_branch, else_branch, .. } => {
            cost(f, *then_branch).max(else_branch.map_or(0, |e| cost(f, e)))
        }
        StmtData::While { body, .. } => 64u64.saturating_mul(cost(f, *body)),
        StmtData::Let { body, .. }
        | StmtData::Assert { body, .. }
        | StmtData::Attr { body, .. }
        | StmtData::DeclBuffer { body, .. }
        | StmtData::Allocate { body, .. } => cost(f, *body),
        StmtData::Store { .. } | StmtData::Evaluate(_) | StmtData::Block(_) => 1,
    }
}

/// What an outlined body receives.
enum Capture<'ctx> {
    Var(SymVar, BasicValueEnum<'ctx>),
    Data(SymVar, PointerValue<'ctx>),
    Buf(Buffer, BufInfo<'ctx>),
}

impl<'s, 'a, 'ctx> Fx<'s, 'a, 'ctx> {
    /// A new function's state, positioned at the end of its entry block.
    pub(super) fn new(sh: &'s Shared<'a, 'ctx>, func: inkwell::values::FunctionValue<'ctx>) -> Fx<'s, 'a, 'ctx> {
        let entry = sh.cx.append_basic_block(func, "entry");
        let b = sh.cx.create_builder();
        b.position_at_end(entry);
        Fx {
            sh,
            b,
            func,
            entry,
            vars: HashMap::new(),
            bufs: HashMap::new(),
            data: HashMap::new(),
            in_parallel: false,
            ret_slot: None,
        }
    }

    /// Sets the attributes every generated function carries.
    pub(super) fn set_fn_attrs(sh: &Shared<'_, 'ctx>, func: inkwell::values::FunctionValue<'ctx>) {
        let cx = sh.cx;
        func.add_attribute(AttributeLoc::Function, cx.create_string_attribute("target-cpu", sh.target.0));
        if !sh.target.1.is_empty() {
            func.add_attribute(AttributeLoc::Function, cx.create_string_attribute("target-features", sh.target.1));
        }
        func.add_attribute(
            AttributeLoc::Function,
            cx.create_enum_attribute(Attribute::get_named_enum_kind_id("nounwind"), 0),
        );
    }

    /// Marks parameter `i` of `func` `noalias`.
    pub(super) fn set_noalias(sh: &Shared<'_, 'ctx>, func: inkwell::values::FunctionValue<'ctx>, i: u32) {
        let a = sh.cx.create_enum_attribute(Attribute::get_named_enum_kind_id("noalias"), 0);
        func.add_attribute(AttributeLoc::Param(i), a);
    }

    /// Lowers `for var in T.parallel(min, min + extent): body`.
    pub(super) fn parallel_loop(&mut self, var: SymVar, min: PrimExpr, extent: PrimExpr, body: Stmt) -> R<()> {
        let f = self.sh.f;
        let cx = self.sh.cx;
        let i64t = cx.i64_type();
        let i32t = cx.i32_type();
        let ptr_t = cx.ptr_type(AddressSpace::default());
        let lo = self.eval_i64(min)?;
        let n = self.eval_i64(extent)?;
        let mut uses = Uses::default();
        uses.stmt(f, body);
        uses.defined_vars.insert(var.index() as u32);
        let mut caps: Vec<Capture<'ctx>> = Vec::new();
        for &v in uses.vars.difference(&uses.defined_vars) {
            let sv = SymVar::new(v as usize);
            if let Some(x) = self.vars.get(&sv) {
                caps.push(Capture::Var(sv, *x));
            } else if let Some(p) = self.data.get(&sv) {
                caps.push(Capture::Data(sv, *p));
            }
        }
        for &b in uses.bufs.difference(&uses.defined_bufs) {
            let bb = Buffer::new(b as usize);
            if let Some(info) = self.bufs.get(&bb) {
                caps.push(Capture::Buf(bb, info.clone()));
            }
        }
        let noalias = self.sh.noalias
            && caps.iter().all(|c| match c {
                Capture::Buf(_, i) => i.distinct,
                Capture::Data(..) => false,
                Capture::Var(..) => true,
            });
        // The body's parameters: lo, the captures, begin, end.
        let mut params: Vec<BasicTypeEnum<'ctx>> = vec![i64t.into()];
        let mut slot_vals: Vec<BasicValueEnum<'ctx>> = vec![lo.into()];
        let mut slot_dts: Vec<DataType> = vec![DataType::INT64];
        let mut noalias_params = Vec::new();
        for c in &caps {
            match c {
                Capture::Var(v, x) => {
                    let dt = f.pool.vars[*v].dtype;
                    params.push(self.reg_ty(dt)?);
                    slot_vals.push(self.to_slot(*x, dt)?);
                    slot_dts.push(dt);
                }
                Capture::Data(_, p) => {
                    params.push(ptr_t.into());
                    slot_vals.push((*p).into());
                    slot_dts.push(DataType::HANDLE);
                }
                Capture::Buf(_, info) => {
                    if noalias {
                        noalias_params.push(params.len() as u32);
                    }
                    params.push(ptr_t.into());
                    slot_vals.push(info.ptr.into());
                    slot_dts.push(DataType::HANDLE);
                    // Constant strides stay constants in the body (a unit stride is what
                    // lets LLVM see consecutive accesses); the others are parameters.
                    for s in info.strides.iter().chain(&info.dims).filter(|s| !s.is_const()) {
                        params.push(i64t.into());
                        slot_vals.push((*s).into());
                        slot_dts.push(DataType::INT64);
                    }
                }
            }
        }
        let k = self.sh.outlined.get();
        self.sh.outlined.set(k + 1);
        let name = format!("{}_par{k}", self.sh.name);
        let mut body_params: Vec<_> = params.iter().map(|&t| t.into()).collect();
        body_params.push(i64t.into());
        body_params.push(i64t.into());
        let body_fn = self.sh.module.add_function(
            &format!("{name}_body"),
            i32t.fn_type(&body_params, false),
            Some(Linkage::Internal),
        );
        Self::set_fn_attrs(self.sh, body_fn);
        for &i in &noalias_params {
            Self::set_noalias(self.sh, body_fn, i);
        }
        {
            let mut inner = Fx::new(self.sh, body_fn);
            inner.in_parallel = true;
            let p = |i: usize| body_fn.get_nth_param(i as u32).expect("a parameter");
            let ilo = p(0).into_int_value();
            let mut at = 1;
            for c in &caps {
                match c {
                    Capture::Var(v, _) => {
                        inner.vars.insert(*v, p(at));
                        at += 1;
                    }
                    Capture::Data(v, _) => {
                        inner.data.insert(*v, p(at).into_pointer_value());
                        at += 1;
                    }
                    Capture::Buf(b, info) => {
                        let ptr = p(at).into_pointer_value();
                        at += 1;
                        let mut take = |xs: &[inkwell::values::IntValue<'ctx>]| {
                            let mut out = Vec::with_capacity(xs.len());
                            for s in xs {
                                if s.is_const() {
                                    out.push(*s);
                                } else {
                                    out.push(p(at).into_int_value());
                                    at += 1;
                                }
                            }
                            out
                        };
                        let strides = take(&info.strides);
                        let dims = take(&info.dims);
                        let (dtype, distinct) = (info.dtype, info.distinct);
                        inner.bufs.insert(*b, BufInfo { ptr, strides, dtype, dims, distinct });
                    }
                }
            }
            let begin = p(at).into_int_value();
            let end = p(at + 1).into_int_value();
            let from = inner.b.build_int_nsw_add(ilo, begin, "from")?;
            let to = inner.b.build_int_nsw_add(ilo, end, "to")?;
            inner.serial_loop(var, from, to, None, |fx| fx.exec(body))?;
            inner.b.build_return(Some(&i32t.const_zero()))?;
        }
        // The thunk: unpack the closure.
        let thunk = self.sh.module.add_function(
            &name,
            i32t.fn_type(&[ptr_t.into(), i64t.into(), i64t.into()], false),
            Some(Linkage::Internal),
        );
        Self::set_fn_attrs(self.sh, thunk);
        {
            let t = Fx::new(self.sh, thunk);
            let cl = thunk.get_nth_param(0).expect("closure").into_pointer_value();
            let mut args: Vec<inkwell::values::BasicMetadataValueEnum<'ctx>> = Vec::new();
            for (i, (&dt, &ty)) in slot_dts.iter().zip(&params).enumerate() {
                let at = ffi::elem_ptr(&t.b, i64t.into(), cl, i64t.const_int(i as u64, false))?;
                let raw = t.b.build_load(t.slot_ty(dt), at, "cap")?;
                let v = t.slot_to_value(raw, dt)?;
                debug_assert_eq!(v.get_type(), ty);
                args.push(v.into());
            }
            args.push(thunk.get_nth_param(1).expect("begin").into());
            args.push(thunk.get_nth_param(2).expect("end").into());
            let r = t.b.build_call(body_fn, &args, "r")?;
            let r = r.try_as_basic_value().basic().expect("i32");
            t.b.build_return(Some(&r))?;
        }
        // The call.
        let here = self.b.get_insert_block().expect("positioned");
        match self.entry.get_first_instruction() {
            Some(i) => self.b.position_before(&i),
            None => self.b.position_at_end(self.entry),
        }
        let closure = self.b.build_alloca(i64t.array_type(slot_vals.len().max(1) as u32), "closure")?;
        self.b.position_at_end(here);
        for (i, v) in slot_vals.iter().enumerate() {
            let at = ffi::elem_ptr(&self.b, i64t.into(), closure, i64t.const_int(i as u64, false))?;
            self.b.build_store(at, *v)?;
        }
        let pf = self.sh.module.get_function(super::PARALLEL_FOR).unwrap_or_else(|| {
            let t = i32t.fn_type(&[ptr_t.into(), ptr_t.into(), i64t.into(), i64t.into()], false);
            self.sh.module.add_function(super::PARALLEL_FOR, t, None)
        });
        let per_iter = cost(f, body).max(1);
        let min_chunk = (20_000 / per_iter).max(1);
        let r = self.b.build_call(
            pf,
            &[
                thunk.as_global_value().as_pointer_value().into(),
                closure.into(),
                n.into(),
                i64t.const_int(min_chunk, false).into(),
            ],
            "pfor",
        )?;
        let code = r.try_as_basic_value().basic().expect("i32").into_int_value();
        let bad = self.b.build_int_compare(IntPredicate::NE, code, i32t.const_zero(), "perr")?;
        let fail = cx.append_basic_block(self.func, "pfail");
        let ok = cx.append_basic_block(self.func, "pok");
        self.b.build_conditional_branch(bad, fail, ok)?;
        self.b.position_at_end(fail);
        self.b.build_return(Some(&code))?;
        self.b.position_at_end(ok);
        Ok(())
    }
}
