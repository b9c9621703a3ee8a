//! Execution of TIR statements.

use std::cell::RefCell;
use std::rc::Rc;

use relax_entity::EntityRef;
use relax_ir::{AttrNode, Buffer, BufferRegion, IterKind, PrimExprData, Stmt, StmtData};

use super::{BufView, Frame, grow};
use crate::error::{RunError, RunResult};
use crate::scalar::Scalar;
use crate::value::{numel, row_major_strides, store};

impl Frame<'_> {
    /// Runs a statement.
    pub fn exec(&mut self, s: Stmt) -> RunResult<()> {
        grow(|| self.exec_inner(s)).map_err(|e| e.or_at(self.span_of(s)))
    }

    fn exec_inner(&mut self, s: Stmt) -> RunResult<()> {
        let f = self.f;
        match f.stmt(s) {
            StmtData::Seq(v) => {
                for &x in v {
                    self.exec(x)?;
                }
                Ok(())
            }
            StmtData::For { var, min, extent, step, body, .. } => {
                let min = self.eval(*min)?.as_i64();
                let extent = self.eval(*extent)?.as_i64();
                let step = match step {
                    Some(st) => self.eval(*st)?.as_i64(),
                    None => 1,
                };
                let dt = f.pool.vars[*var].dtype;
                if step == 1 {
                    for i in 0..extent.max(0) {
                        self.set_var(*var, Scalar::int(dt, min + i));
                        self.exec(*body)?;
                    }
                } else {
                    // With a step, `extent` is the end of the range (TVM's `T.serial(a, b, step)`).
                    let mut i = min;
                    while (step > 0 && i < min + extent) || (step < 0 && i > min + extent) {
                        self.set_var(*var, Scalar::int(dt, i));
                        self.exec(*body)?;
                        i += step;
                    }
                }
                Ok(())
            }
            StmtData::Block(b) => self.block(b),
            StmtData::Store { buffer, indices, value } => {
                let v = self.eval(*value)?;
                let mut idx = Vec::with_capacity(indices.len());
                for &i in indices {
                    idx.push(self.eval(i)?.as_i64());
                }
                let (view, at) = self.address(*buffer, &idx)?;
                let mut b = view.data.borrow_mut();
                store(&mut b, at, view.dtype, v);
                Ok(())
            }
            StmtData::If { cond, then_branch, else_branch } => {
                if self.eval(*cond)?.is_true() {
                    self.exec(*then_branch)
                } else if let Some(e) = else_branch {
                    self.exec(*e)
                } else {
                    Ok(())
                }
            }
            StmtData::While { cond, body } => {
                while self.eval(*cond)?.is_true() {
                    self.exec(*body)?;
                }
                Ok(())
            }
            StmtData::Let { var, value, body } => {
                let v = self.eval(*value)?;
                self.set_var(*var, v);
                self.exec(*body)
            }
            StmtData::Evaluate(e) => {
                self.eval(*e)?;
                Ok(())
            }
            StmtData::Assert { cond, message, body } => {
                if !self.eval(*cond)?.is_true() {
                    let msg = match f.pool.prim(*message) {
                        PrimExprData::Str(s) => s.clone(),
                        _ => "assertion failed".to_string(),
                    };
                    return Err(RunError::new(format!("PrimFunc `{}`: assertion failed: {msg}", self.name)));
                }
                self.exec(*body)
            }
            StmtData::Attr { node, key, value, body } => {
                // `T.launch_thread` in lowered TIR: the thread variable runs over its extent.
                if matches!(key.as_str(), "thread_extent" | "virtual_thread")
                    && let AttrNode::Expr(e) = node
                    && let Some(v) = f.pool.as_var(*e)
                {
                    let extent = self.eval(*value)?.as_i64();
                    let dt = f.pool.vars[v].dtype;
                    for i in 0..extent {
                        self.set_var(v, Scalar::int(dt, i));
                        self.exec(*body)?;
                    }
                    return Ok(());
                }
                self.exec(*body)
            }
            StmtData::DeclBuffer { buffer, body } => {
                let bd = f.buffer(*buffer);
                match self.data_vars.get(&bd.data).cloned() {
                    Some((data, base)) => self.bind_view(*buffer, data, base)?,
                    None => self.alloc(*buffer)?,
                }
                self.exec(*body)
            }
            StmtData::Allocate { buffer, body } => {
                self.alloc(*buffer)?;
                self.exec(*body)
            }
        }
    }

    /// Binds a buffer as a view of `data` at byte offset `base` plus its element offset.
    fn bind_view(&mut self, b: Buffer, data: crate::value::Bytes, base: usize) -> RunResult<()> {
        let bd = self.f.buffer(b).clone();
        let mut shape = Vec::with_capacity(bd.shape.len());
        for &d in &bd.shape {
            shape.push(self.eval(d)?.as_i64());
        }
        let strides = if bd.strides.is_empty() {
            row_major_strides(&shape)
        } else {
            let mut v = Vec::new();
            for &s in &bd.strides {
                v.push(self.eval(s)?.as_i64());
            }
            v
        };
        let off = match bd.elem_offset {
            Some(e) => self.eval(e)?.as_i64(),
            None => 0,
        };
        let base = base as i64 + off * bd.dtype.bytes() as i64;
        self.bufs[b.index()] = Some(BufView { data, base: base.max(0) as usize, shape, strides, dtype: bd.dtype });
        Ok(())
    }

    /// Allocates a zero-filled buffer.
    fn alloc(&mut self, b: Buffer) -> RunResult<()> {
        let bd = self.f.buffer(b).clone();
        let mut shape = Vec::with_capacity(bd.shape.len());
        for &d in &bd.shape {
            let v = self.eval(d)?.as_i64();
            if v < 0 {
                return Err(RunError::new(format!(
                    "PrimFunc `{}`: buffer `{}` is allocated with a negative dim {v}",
                    self.name, bd.name
                )));
            }
            shape.push(v);
        }
        let data = Rc::new(RefCell::new(vec![0u8; numel(&shape) * bd.dtype.bytes() as usize]));
        self.data_vars.insert(bd.data, (data.clone(), 0));
        let strides = row_major_strides(&shape);
        self.bufs[b.index()] = Some(BufView { data, base: 0, shape, strides, dtype: bd.dtype });
        Ok(())
    }

    /// Binds `T.match_buffer(A[region], shape)` inside a block.
    fn match_region(&mut self, b: Buffer, src: &BufferRegion) -> RunResult<()> {
        let mut mins = Vec::with_capacity(src.region.len());
        let mut extents = Vec::with_capacity(src.region.len());
        for r in &src.region {
            mins.push(self.eval(r.min)?.as_i64());
            extents.push(self.eval(r.extent)?.as_i64());
        }
        let (view, at) = self.address(src.buffer, &mins)?;
        let bd = self.f.buffer(b).clone();
        let n = bd.shape.len();
        if n > view.strides.len() {
            return Err(RunError::new(format!(
                "PrimFunc `{}`: `T.match_buffer` of `{}` has more dims than its source region",
                self.name, bd.name
            )));
        }
        let strides = view.strides[view.strides.len() - n..].to_vec();
        let exts = &extents[extents.len() - n..];
        for (i, &d) in bd.shape.iter().enumerate() {
            self.bind_expr(d, exts[i], &format!("dim {i} of matched buffer `{}`", bd.name))?;
        }
        for (i, &s) in bd.strides.iter().enumerate() {
            self.bind_expr(s, strides[i], &format!("stride {i} of matched buffer `{}`", bd.name))?;
        }
        let w = view.dtype.bytes() as usize;
        if let Some(off) = bd.elem_offset {
            self.bind_expr(off, (at / w) as i64, &format!("element offset of matched buffer `{}`", bd.name))?;
        }
        self.data_vars.insert(bd.data, (view.data.clone(), 0));
        self.bufs[b.index()] =
            Some(BufView { data: view.data, base: at, shape: exts.to_vec(), strides, dtype: bd.dtype });
        Ok(())
    }

    /// Binds an unbound variable, or checks the value of an expression.
    fn bind_expr(&mut self, e: relax_ir::PrimExpr, actual: i64, what: &str) -> RunResult<()> {
        if let PrimExprData::Var(v) = self.f.pool.prim(e)
            && self.vars[v.index()].is_none()
        {
            let dt = self.f.pool.vars[*v].dtype;
            self.set_var(*v, Scalar::int(dt, actual));
            return Ok(());
        }
        let want = self.eval(e)?.as_i64();
        if want != actual {
            return Err(RunError::new(format!(
                "PrimFunc `{}`: {what} is {want}, but the region has {actual}",
                self.name
            )));
        }
        Ok(())
    }

    fn block(&mut self, b: &relax_ir::BlockNode) -> RunResult<()> {
        let mut vals = Vec::with_capacity(b.iter_vars.len());
        for iv in &b.iter_vars {
            vals.push(self.eval(iv.binding)?);
        }
        for (iv, v) in b.iter_vars.iter().zip(&vals) {
            self.set_var(iv.var, *v);
        }
        if let Some(p) = b.predicate
            && !self.eval(p)?.is_true()
        {
            return Ok(());
        }
        // `T.init` runs when every reduction variable is at the start of its domain.
        let mut at_start = true;
        for (iv, v) in b.iter_vars.iter().zip(&vals) {
            if iv.kind == IterKind::Reduce && v.as_i64() != self.eval(iv.dom.min)?.as_i64() {
                at_start = false;
            }
        }
        for &a in &b.alloc_buffers {
            self.alloc(a)?;
        }
        for mb in &b.match_buffers {
            self.match_region(mb.buffer, &mb.source)?;
        }
        if let Some(init) = b.init
            && at_start
        {
            self.exec(init)?;
        }
        self.exec(b.body)
    }
}
