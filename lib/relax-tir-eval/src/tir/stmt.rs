//! Execution of lowered TIR statements (`relax_ir::tir_lower`): a block is an internal
//! error, since whoever hands a module to the interpreter lowers it first.

use relax_entity::EntityRef;
use relax_ir::{AttrNode, Buffer, PrimExprData, Stmt, StmtData};

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
            StmtData::Block(b) => Err(RunError::new(format!(
                "internal error: PrimFunc `{}` still has block `{}`: the TIR interpreter runs lowered TIR only (`lower-tir`, `relax_ir::tir_lower`)",
                self.name, b.name
            ))),
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

    /// Allocates a zero-filled buffer (block allocations were always zero-filled, and
    /// lowered ones still are).
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
        let data = crate::value::shared_bytes(vec![0u8; numel(&shape) * bd.dtype.bytes() as usize]);
        self.data_vars.insert(bd.data, (data.clone(), 0));
        let strides = row_major_strides(&shape);
        self.bufs[b.index()] = Some(BufView { data, base: 0, shape, strides, dtype: bd.dtype });
        Ok(())
    }
}
