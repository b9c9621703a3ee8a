//! The host side of GPU kernels, shared by the SPIR-V and PTX back ends and the GPU
//! engines (`docs/gpu.md`).
//!
//! A PrimFunc scheduled by `schedule-gpu` and lowered (`relax_ir::tir_lower`) is the
//! root block's allocations (`T.alloc_buffer` statements) around a sequence of launches,
//! each `for b in T.thread_binding(B, thread="blockIdx.x"): for t in
//! T.thread_binding(T, thread="threadIdx.x"): ...`. [`analyze`] turns it into a
//! [`GpuFunc`]: one [`Launch`] per stage, run in order (each is its own kernel), with the
//! grid size `B` as a symbolic expression and the block size `T` a constant; the buffers
//! every kernel of the function binds (the parameters' tensors, then the allocations
//! around the launches, which live in global memory between launches); and the scalar
//! arguments (scalar parameters and the symbolic dims bound by parameter buffers, in the
//! order of [`crate::abi`]), which SPIR-V passes as push constants and PTX as kernel
//! parameters. [`eval_int`] evaluates the symbolic sizes once the dims are known.

use relax_ir::{
    BinOp, Buffer, DataType, ForKind, Global, Pool, PrimExpr, PrimExprData, PrimFunc, Stmt, StmtData, SymVar,
};

use crate::abi::{SlotKind, kernel_abi};
use crate::error::CodegenError;

/// Where a kernel buffer's memory comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufSource {
    /// The tensor passed as parameter number `.0`.
    Param(usize),
    /// An allocation around the launches (the root block's): the engine provides
    /// zero-filled scratch memory.
    Scratch,
}

/// A buffer bound to every kernel of a function.
#[derive(Clone, Debug)]
pub struct GpuBuf {
    /// The buffer.
    pub buffer: Buffer,
    /// Its memory.
    pub source: BufSource,
    /// Its shape (symbolic); the size in elements is the product.
    pub shape: Vec<PrimExpr>,
    /// Its element type.
    pub dtype: DataType,
}

/// One kernel launch: a stage of the function.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The kernel's name: the function's, with `_kernel{i}` when it has several stages.
    pub entry: String,
    /// The `blockIdx.x` variable, its first value and its extent (the grid size).
    pub block_var: SymVar,
    /// First value of the block index.
    pub block_min: PrimExpr,
    /// The number of blocks (symbolic).
    pub blocks: PrimExpr,
    /// The `threadIdx.x` variable.
    pub thread_var: SymVar,
    /// First value of the thread index.
    pub thread_min: PrimExpr,
    /// Threads per block.
    pub threads: u32,
    /// The statement each thread runs.
    pub body: Stmt,
}

/// The kernels of one PrimFunc.
#[derive(Clone, Debug)]
pub struct GpuFunc {
    /// The PrimFunc.
    pub global: Global,
    /// Its name.
    pub name: String,
    /// The buffers, in binding order.
    pub buffers: Vec<GpuBuf>,
    /// The scalar arguments, in order: scalar parameters and symbolic dims.
    pub scalars: Vec<SymVar>,
    /// The launches, in order.
    pub launches: Vec<Launch>,
}

impl GpuBuf {
    /// The size in elements, given the values of the symbolic variables.
    pub fn elems(&self, pool: &Pool, var: &dyn Fn(SymVar) -> Option<i64>) -> Result<i64, String> {
        self.shape.iter().try_fold(1i64, |acc, &d| Ok(acc.saturating_mul(eval_int(pool, d, var)?.max(0))))
    }
}

impl GpuFunc {
    /// The binding of `b`, if the kernels may use it.
    pub fn binding(&self, b: Buffer) -> Option<usize> {
        self.buffers.iter().position(|x| x.buffer == b)
    }
}

fn err(f: &PrimFunc, s: Stmt, msg: impl Into<String>) -> CodegenError {
    CodegenError::new(msg).or_at(f.spans.stmts[s])
}

/// The launches of a function scheduled for the GPU.
pub fn analyze(name: &str, g: Global, f: &PrimFunc) -> Result<GpuFunc, CodegenError> {
    let not_scheduled = || {
        CodegenError::new(format!(
            "`{name}` is not scheduled for the GPU (every stage must be a `blockIdx.x` loop around a `threadIdx.x` loop; run `schedule-gpu`)"
        ))
        .or_at(f.spans.func)
    };
    crate::error::require_lowered(name, f)?;
    if !f.ret.is_void() {
        return Err(CodegenError::new(format!("`{name}` returns a value; GPU kernels cannot")).or_at(f.spans.func));
    }
    let abi = kernel_abi(f);
    let mut buffers = Vec::new();
    let mut scalars = Vec::new();
    for s in &abi.slots {
        match (s.kind, s.var) {
            (SlotKind::Handle, Some(v)) => {
                let idx = f.params.iter().position(|&p| p == v).expect("a parameter");
                let Some(b) = f.param_buffer(v) else {
                    return Err(CodegenError::new(format!(
                        "`{name}`: handle parameter `{}` has no buffer",
                        f.pool.vars[v].name
                    ))
                    .or_at(f.spans.func));
                };
                buffers.push((b, BufSource::Param(idx)));
            }
            (SlotKind::Scalar | SlotKind::ShapeVar, Some(v)) => scalars.push(v),
            _ => {}
        }
    }
    // The allocations around the stages (the root block's, lowered), and the stages.
    let mut top = f.body;
    loop {
        match &f.stmts[top] {
            StmtData::Allocate { buffer, body } => {
                buffers.push((*buffer, BufSource::Scratch));
                top = *body;
            }
            StmtData::Seq(v) if v.len() == 1 => top = v[0],
            _ => break,
        }
    }
    let buffers = buffers
        .into_iter()
        .map(|(b, source)| {
            let bd = f.buffer(b);
            GpuBuf { buffer: b, source, shape: bd.shape.clone(), dtype: bd.dtype }
        })
        .collect::<Vec<_>>();
    let stages = match &f.stmts[top] {
        StmtData::Seq(v) => v.clone(),
        _ => vec![top],
    };
    let many = stages.len() > 1;
    let mut launches = Vec::new();
    for (i, s) in stages.into_iter().enumerate() {
        let StmtData::For {
            var: bv,
            min: bmin,
            extent: bext,
            kind: ForKind::ThreadBinding,
            thread: Some(bt),
            body,
            ..
        } = &f.stmts[s]
        else {
            return Err(not_scheduled());
        };
        let StmtData::For {
            var: tv,
            min: tmin,
            extent: text,
            kind: ForKind::ThreadBinding,
            thread: Some(tt),
            body: inner,
            ..
        } = &f.stmts[*body]
        else {
            return Err(not_scheduled());
        };
        if bt != "blockIdx.x" || tt != "threadIdx.x" {
            return Err(err(
                f,
                s,
                format!(
                    "`{name}`: only `blockIdx.x` over `threadIdx.x` launches are supported, found `{bt}` over `{tt}`"
                ),
            ));
        }
        let threads = match f.pool.as_int(*text) {
            Some(n) if (1..=1024).contains(&n) => n as u32,
            _ => {
                return Err(err(
                    f,
                    *body,
                    format!("`{name}`: the `threadIdx.x` extent must be a constant from 1 to 1024"),
                ));
            }
        };
        let entry = if many { format!("{name}_kernel{i}") } else { name.to_string() };
        launches.push(Launch {
            entry,
            block_var: *bv,
            block_min: *bmin,
            blocks: *bext,
            thread_var: *tv,
            thread_min: *tmin,
            threads,
            body: *inner,
        });
    }
    let mut bad = None;
    for l in &launches {
        f.walk(l.body, |s, d| {
            if bad.is_none()
                && let StmtData::For { kind: ForKind::ThreadBinding, .. } = d
            {
                bad = Some(s);
            }
        });
    }
    if let Some(s) = bad {
        return Err(err(f, s, format!("`{name}`: nested thread bindings are not supported")));
    }
    Ok(GpuFunc { global: g, name: name.to_string(), buffers, scalars, launches })
}

/// Evaluates an integer expression; `var` gives the values of its variables.
pub fn eval_int(pool: &Pool, e: PrimExpr, var: &dyn Fn(SymVar) -> Option<i64>) -> Result<i64, String> {
    let ev = |x: PrimExpr| eval_int(pool, x, var);
    Ok(match pool.prim(e) {
        PrimExprData::Int(_, v) => *v,
        PrimExprData::Var(v) => var(*v).ok_or_else(|| format!("`{}` has no value", pool.vars[*v].name))?,
        PrimExprData::Cast(_, a) => ev(*a)?,
        PrimExprData::Bin(op, a, b) => {
            let (a, b) = (ev(*a)?, ev(*b)?);
            let nz = |b: i64| if b == 0 { Err("division by zero in a launch size".to_string()) } else { Ok(b) };
            match op {
                BinOp::Add => a.wrapping_add(b),
                BinOp::Sub => a.wrapping_sub(b),
                BinOp::Mul => a.wrapping_mul(b),
                BinOp::Div => a.wrapping_div(nz(b)?),
                BinOp::Mod => a.wrapping_rem(nz(b)?),
                BinOp::FloorDiv => relax_ir::prim_build::floor_div(a, nz(b)?),
                BinOp::FloorMod => relax_ir::prim_build::floor_mod(a, nz(b)?),
                BinOp::Min => a.min(b),
                BinOp::Max => a.max(b),
                BinOp::Eq => (a == b) as i64,
                BinOp::Ne => (a != b) as i64,
                BinOp::Lt => (a < b) as i64,
                BinOp::Le => (a <= b) as i64,
                BinOp::Gt => (a > b) as i64,
                BinOp::Ge => (a >= b) as i64,
                BinOp::And => (a != 0 && b != 0) as i64,
                BinOp::Or => (a != 0 || b != 0) as i64,
            }
        }
        PrimExprData::Select(c, t, f) => {
            if ev(*c)? != 0 {
                ev(*t)?
            } else {
                ev(*f)?
            }
        }
        _ => return Err("a launch size must be an integer expression".to_string()),
    })
}

/// The launch description as text, one line per kernel (`relax-translate`'s header).
pub fn describe(f: &PrimFunc, gf: &GpuFunc) -> Vec<String> {
    let p = |e: PrimExpr| relax_ir::printer::print_prim_in(&f.pool, e);
    let bufs: Vec<String> = gf
        .buffers
        .iter()
        .map(|b| {
            let bd = f.buffer(b.buffer);
            match b.source {
                BufSource::Param(_) => format!("{}: {}", bd.name, bd.dtype),
                BufSource::Scratch => {
                    let dims: Vec<String> = b.shape.iter().map(|&d| p(d)).collect();
                    format!("{}: {} scratch({})", bd.name, bd.dtype, dims.join(", "))
                }
            }
        })
        .collect();
    let scalars: Vec<String> =
        gf.scalars.iter().map(|&v| format!("{}: {}", f.pool.vars[v].name, f.pool.vars[v].dtype)).collect();
    gf.launches
        .iter()
        .map(|l| {
            format!(
                "{}: grid=({}, 1, 1) block=({}, 1, 1) buffers=({}) scalars=({})",
                l.entry,
                p(l.blocks),
                l.threads,
                bufs.join(", "),
                scalars.join(", ")
            )
        })
        .collect()
}
