//! Encoding of a [`Pool`] (symbolic variables, TIR expressions, Relax types, in arena
//! order, each operand a handle of an earlier entry).
//!
//! Decoding interns the entries again in the same order, so every handle keeps its
//! index; an operand that is not an earlier entry, or an entry that interns to another
//! index (a duplicate), is malformed.

use relax_entity::EntityRef;
use relax_ir::{BinOp, FloatBits, Pool, PrimExpr, PrimExprData, SymVarData, TensorShape, Ty, TyData, VDevice};

use super::wire::{Reader, Writer};
use crate::error::{RunError, RunResult};

const BIN_OPS: [BinOp; 17] = [
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Mod,
    BinOp::FloorDiv,
    BinOp::FloorMod,
    BinOp::Min,
    BinOp::Max,
    BinOp::Eq,
    BinOp::Ne,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
    BinOp::And,
    BinOp::Or,
];

/// Why `p` cannot be encoded, if it cannot.
pub(crate) fn check_pool(p: &Pool) -> Result<(), String> {
    for (_, d) in p.prims.iter() {
        if matches!(d, PrimExprData::Load { .. }) {
            return Err("a buffer load in a symbolic expression".to_string());
        }
    }
    Ok(())
}

fn h(e: PrimExpr) -> u32 {
    e.index() as u32
}

pub(crate) fn write_pool(w: &mut Writer, p: &Pool) {
    w.len(p.vars.len());
    for (_, v) in p.vars.iter() {
        w.str(&v.name);
        w.dtype(v.dtype);
    }
    w.len(p.prims.len());
    for (_, d) in p.prims.iter() {
        match d {
            PrimExprData::Int(dt, x) => {
                w.u8(0);
                w.dtype(*dt);
                w.i64(*x);
            }
            PrimExprData::Float(dt, x) => {
                w.u8(1);
                w.dtype(*dt);
                w.u64(x.0);
            }
            PrimExprData::Str(s) => {
                w.u8(2);
                w.str(s);
            }
            PrimExprData::Var(v) => {
                w.u8(3);
                w.u32(v.index() as u32);
            }
            PrimExprData::Bin(op, a, b) => {
                w.u8(4);
                w.u8(BIN_OPS.iter().position(|x| x == op).unwrap_or(0) as u8);
                w.u32(h(*a));
                w.u32(h(*b));
            }
            PrimExprData::Not(a) => {
                w.u8(5);
                w.u32(h(*a));
            }
            PrimExprData::Cast(dt, a) => {
                w.u8(6);
                w.dtype(*dt);
                w.u32(h(*a));
            }
            PrimExprData::Select(a, b, c) => {
                w.u8(7);
                w.u32(h(*a));
                w.u32(h(*b));
                w.u32(h(*c));
            }
            PrimExprData::Call { dtype, op, args } => {
                w.u8(8);
                w.dtype(*dtype);
                w.str(&op.name());
                w.u32s(&args.iter().map(|&a| h(a)).collect::<Vec<_>>());
            }
            PrimExprData::Let { var, value, body } => {
                w.u8(9);
                w.u32(var.index() as u32);
                w.u32(h(*value));
                w.u32(h(*body));
            }
            PrimExprData::Ramp { base, stride, lanes } => {
                w.u8(10);
                w.u32(h(*base));
                w.u32(h(*stride));
                w.u32(u32::from(*lanes));
            }
            PrimExprData::Broadcast { value, lanes } => {
                w.u8(11);
                w.u32(h(*value));
                w.u32(u32::from(*lanes));
            }
            // Rejected by `check_pool` before encoding.
            PrimExprData::Load { .. } => w.u8(255),
        }
    }
    w.len(p.tys.len());
    for (_, t) in p.tys.iter() {
        write_ty(w, t);
    }
}

fn write_prims(w: &mut Writer, v: &[PrimExpr]) {
    w.u32s(&v.iter().map(|&e| h(e)).collect::<Vec<_>>());
}

fn write_ty(w: &mut Writer, t: &TyData) {
    match t {
        TyData::Object => w.u8(0),
        TyData::Prim { dtype, value } => {
            w.u8(1);
            w.dtype(*dtype);
            w.bool(value.is_some());
            if let Some(v) = value {
                w.u32(h(*v));
            }
        }
        TyData::Shape { values, ndim } => {
            w.u8(2);
            w.bool(values.is_some());
            if let Some(v) = values {
                write_prims(w, v);
            }
            w.u32(*ndim as u32);
        }
        TyData::Tensor { shape, dtype, ndim, vdevice } => {
            w.u8(3);
            match shape {
                TensorShape::Unknown => w.u8(0),
                TensorShape::Dims(d) => {
                    w.u8(1);
                    write_prims(w, d);
                }
                TensorShape::Var(v) => {
                    w.u8(2);
                    w.u32(v.index() as u32);
                }
            }
            w.dtype(*dtype);
            w.u32(*ndim as u32);
            w.bool(vdevice.is_some());
            if let Some(vd) = vdevice {
                w.str(&vd.kind);
                w.u32(vd.index);
                w.str(&vd.scope);
            }
        }
        TyData::Tuple(fs) => {
            w.u8(4);
            w.u32s(&fs.iter().map(|t| t.index() as u32).collect::<Vec<_>>());
        }
        TyData::Callable { params, ret, pure } => {
            w.u8(5);
            w.bool(params.is_some());
            if let Some(ps) = params {
                w.u32s(&ps.iter().map(|t| t.index() as u32).collect::<Vec<_>>());
            }
            w.u32(ret.index() as u32);
            w.bool(*pure);
        }
    }
}

pub(crate) fn read_pool(r: &mut Reader<'_>) -> RunResult<Pool> {
    let mut p = Pool::new();
    let nv = r.len(9)?;
    for _ in 0..nv {
        let name = r.str()?;
        let dtype = r.dtype()?;
        p.vars.push(SymVarData::new(name, dtype));
    }
    let np = r.len(1)?;
    for i in 0..np {
        let d = read_prim(r, &p, i)?;
        let e = p.raw(d);
        if e.index() != i {
            return Err(r.err(format!("expression {i} repeats an earlier one")));
        }
    }
    let nt = r.len(1)?;
    for i in 0..nt {
        let d = read_ty(r, &p, i)?;
        let t = p.intern_ty(d);
        if t.index() != i {
            return Err(r.err(format!("type {i} repeats an earlier one")));
        }
    }
    Ok(p)
}

fn earlier(r: &Reader<'_>, x: u32, n: usize, what: &str) -> RunResult<usize> {
    if (x as usize) < n { Ok(x as usize) } else { Err(r.err(format!("{what} {x} out of range"))) }
}

fn read_prim(r: &mut Reader<'_>, p: &Pool, i: usize) -> RunResult<PrimExprData> {
    let e = |r: &mut Reader<'_>| -> RunResult<PrimExpr> {
        let x = r.u32()?;
        Ok(PrimExpr::new(earlier(r, x, i, "expression")?))
    };
    let var = |r: &mut Reader<'_>| -> RunResult<relax_ir::SymVar> {
        let x = r.u32()?;
        Ok(relax_ir::SymVar::new(earlier(r, x, p.vars.len(), "variable")?))
    };
    let lanes = |r: &mut Reader<'_>| -> RunResult<u16> {
        let x = r.u32()?;
        u16::try_from(x).map_err(|_| r.err("bad lane count"))
    };
    Ok(match r.u8()? {
        0 => PrimExprData::Int(r.dtype()?, r.i64()?),
        1 => PrimExprData::Float(r.dtype()?, FloatBits(r.u64()?)),
        2 => PrimExprData::Str(r.str()?),
        3 => PrimExprData::Var(var(r)?),
        4 => {
            let op = r.u8()?;
            let op = *BIN_OPS.get(op as usize).ok_or_else(|| r.err(format!("bad binary op {op}")))?;
            PrimExprData::Bin(op, e(r)?, e(r)?)
        }
        5 => PrimExprData::Not(e(r)?),
        6 => PrimExprData::Cast(r.dtype()?, e(r)?),
        7 => PrimExprData::Select(e(r)?, e(r)?, e(r)?),
        8 => {
            let dtype = r.dtype()?;
            let op = relax_ir::TirOp::from_name(&r.str()?);
            let n = r.len(4)?;
            let mut args = Vec::with_capacity(n);
            for _ in 0..n {
                args.push(e(r)?);
            }
            PrimExprData::Call { dtype, op, args }
        }
        9 => PrimExprData::Let { var: var(r)?, value: e(r)?, body: e(r)? },
        10 => PrimExprData::Ramp { base: e(r)?, stride: e(r)?, lanes: lanes(r)? },
        11 => PrimExprData::Broadcast { value: e(r)?, lanes: lanes(r)? },
        t => return Err(r.err(format!("bad expression tag {t}"))),
    })
}

fn read_ty(r: &mut Reader<'_>, p: &Pool, i: usize) -> RunResult<TyData> {
    let np = p.prims.len();
    let prims = |r: &mut Reader<'_>| -> RunResult<Vec<PrimExpr>> {
        let xs = r.u32s()?;
        xs.into_iter().map(|x| Ok(PrimExpr::new(earlier(r, x, np, "expression")?))).collect()
    };
    let tys = |r: &mut Reader<'_>| -> RunResult<Vec<Ty>> {
        let xs = r.u32s()?;
        xs.into_iter().map(|x| Ok(Ty::new(earlier(r, x, i, "type")?))).collect()
    };
    Ok(match r.u8()? {
        0 => TyData::Object,
        1 => {
            let dtype = r.dtype()?;
            let value = if r.bool()? {
                let x = r.u32()?;
                Some(PrimExpr::new(earlier(r, x, np, "expression")?))
            } else {
                None
            };
            TyData::Prim { dtype, value }
        }
        2 => {
            let values = if r.bool()? { Some(prims(r)?) } else { None };
            TyData::Shape { values, ndim: r.u32()? as i32 }
        }
        3 => {
            let shape = match r.u8()? {
                0 => TensorShape::Unknown,
                1 => TensorShape::Dims(prims(r)?),
                2 => TensorShape::Var(relax_ir::Var::new(r.u32()? as usize)),
                t => return Err(r.err(format!("bad tensor shape tag {t}"))),
            };
            let dtype = r.dtype()?;
            let ndim = r.u32()? as i32;
            let vdevice =
                if r.bool()? { Some(VDevice { kind: r.str()?, index: r.u32()?, scope: r.str()? }) } else { None };
            TyData::Tensor { shape, dtype, ndim, vdevice }
        }
        4 => TyData::Tuple(tys(r)?),
        5 => {
            let params = if r.bool()? { Some(tys(r)?) } else { None };
            let x = r.u32()?;
            let ret = Ty::new(earlier(r, x, i, "type")?);
            TyData::Callable { params, ret, pure: r.bool()? }
        }
        t => return Err(r.err(format!("bad type tag {t}"))),
    })
}

/// Checks that the pool's tensor shape variables are registers below `num_regs`.
pub(crate) fn check_shape_vars(p: &Pool, num_regs: u32) -> RunResult<()> {
    for (_, t) in p.tys.iter() {
        if let TyData::Tensor { shape: TensorShape::Var(v), .. } = t
            && v.index() >= num_regs as usize
        {
            return Err(RunError::new(format!("malformed executable: shape variable {} out of range", v.index())));
        }
    }
    Ok(())
}
