//! Buffer declarations: the arguments shared by `T.Buffer`, `T.match_buffer`,
//! `T.sblock_alloc_buffer`, `T.alloc_buffer` and `T.decl_buffer` (`text-format.md` §8.2).
//!
//! TVM's positional order is `shape, dtype, data, strides, elem_offset, scope, align,
//! offset_factor, buffer_type, axis_separators`; every slot may also be a keyword. Values
//! equal to TVM's defaults are stored as the IR's defaults (`None`/empty): `align` ≤ 0 or
//! 64, `offset_factor` 0 or 1, `buffer_type="default"`, `scope="global"`. A buffer's data
//! pointer is a new `handle` variable named after the buffer (pointing to its dtype, `int8`
//! for `bool`), unless `data=` names one. As in TVM, a non-zero `offset_factor` without
//! `elem_offset` makes the offset a new variable, and a quoted stride name
//! (`strides=("A_s0",)`) is a new variable.
//!
//! Dims are TIR expressions. Where a shape may define symbolic variables (parameters and
//! `T.match_buffer`), a dim that is a bare or quoted name not yet defined creates the
//! variable: its dtype comes from a `n = T.int64()` declaration of the function, and is
//! `int64` otherwise (`text-format.md` §7.2, §7.3).

use relax_ir::{BufferData, DataType, PrimExpr, SymVarData};

use super::super::LResult;
use super::super::prim_expr::lower_quoted;
use super::scope::{Entry, TirCx};
use crate::ast::{self, ExprKind};

/// The argument names, in TVM's positional order (`layout` is keyword-only).
const SLOTS: [&str; 11] = [
    "shape",
    "dtype",
    "data",
    "strides",
    "elem_offset",
    "scope",
    "align",
    "offset_factor",
    "buffer_type",
    "axis_separators",
    "layout",
];

const SHAPE: usize = 0;
const DTYPE: usize = 1;
const DATA: usize = 2;
const STRIDES: usize = 3;
const ELEM_OFFSET: usize = 4;
const SCOPE: usize = 5;
const ALIGN: usize = 6;
const OFFSET_FACTOR: usize = 7;
const BUFFER_TYPE: usize = 8;
const AXIS_SEPARATORS: usize = 9;
const LAYOUT: usize = 10;

/// The arguments of a buffer declaration, by slot.
pub(super) struct BufferArgs<'e> {
    slots: [Option<&'e ast::Expr>; SLOTS.len()],
}

/// Whether a shape may define symbolic variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dims {
    /// Parameters and `T.match_buffer`: first bare occurrences define variables.
    Define,
    /// Everywhere else: every name must already be defined.
    Use,
}

/// A buffer read from its arguments.
pub(super) struct Built {
    /// The buffer.
    pub data: BufferData,
    /// For `data=<expression>` (lowered TIR): the value the new data variable is bound to.
    pub data_value: Option<PrimExpr>,
}

impl TirCx<'_, '_> {
    /// Sets `scope=` when the text did not (TVM 0.27's `T.alloc_local(...)` and
    /// `T.alloc_shared(...)` are `T.alloc_buffer(..., scope=...)`).
    pub(super) fn with_default_scope<'s>(args: BufferArgs<'s>, scope: &'s ast::Expr) -> BufferArgs<'s> {
        let mut slots = args.slots;
        if slots[SCOPE].is_none() {
            slots[SCOPE] = Some(scope);
        }
        BufferArgs { slots }
    }

    /// Sorts the arguments of a buffer declaration into slots. `skip` leading positional
    /// arguments belong to the caller (the parameter of `T.match_buffer`).
    pub fn buffer_args<'e>(&mut self, call: &'e ast::Call, what: &str, skip: usize) -> LResult<BufferArgs<'e>> {
        let mut slots: [Option<&'e ast::Expr>; SLOTS.len()] = [None; SLOTS.len()];
        let positional = call.args.get(skip..).unwrap_or_default();
        if positional.len() > AXIS_SEPARATORS + 1 {
            return Err(self.err(positional[AXIS_SEPARATORS + 1].span, format!("too many arguments to `{what}`")));
        }
        for (i, a) in positional.iter().enumerate() {
            slots[i] = Some(a);
        }
        for k in &call.keywords {
            let Some(i) = SLOTS.iter().position(|s| *s == k.name.name) else {
                return Err(self.err(k.name.span, format!("unknown argument `{}` of `{what}`", k.name.name)));
            };
            if slots[i].is_some() {
                return Err(self.err(k.name.span, format!("argument `{}` of `{what}` is given twice", k.name.name)));
            }
            slots[i] = Some(&k.value);
        }
        Ok(BufferArgs { slots })
    }

    /// Builds a buffer named `name` from its arguments. `data_expr_ok` allows a `data=`
    /// value that is not a variable (lowered `T.decl_buffer`): it is returned to be bound
    /// by a `let` around the declaration.
    pub fn build_buffer(
        &mut self,
        name: &str,
        args: &BufferArgs<'_>,
        dims: Dims,
        data_expr_ok: bool,
        span: ast::Span,
    ) -> LResult<Built> {
        let s = &args.slots;
        if let Some(l) = s[LAYOUT] {
            return Err(self.err(l.span, "buffer layouts (`layout=`) are not supported"));
        }
        let Some(shape_e) = s[SHAPE] else {
            return Err(self.err(span, "a buffer needs a shape"));
        };
        let shape = self.dims(shape_e, dims, "a buffer dim")?;
        let dtype = match s[DTYPE] {
            Some(e) if !matches!(e.kind, ExprKind::None) => self.dtype_arg(e)?,
            _ => DataType::FLOAT32,
        };
        let scope = match s[SCOPE] {
            Some(e) => self.str_arg(e, "`scope`")?.to_string(),
            None => "global".to_string(),
        };
        // New index variables (strides, offsets) take the type of the first dim.
        let index_t = shape.first().map_or(DataType::INT32, |&d| self.pool.dtype(d));
        let strides = match s[STRIDES] {
            Some(e) if !matches!(e.kind, ExprKind::None) => self.strides(e, dims, index_t, span)?,
            _ => Vec::new(),
        };
        let mut elem_offset = match s[ELEM_OFFSET] {
            Some(e) if !matches!(e.kind, ExprKind::None) => Some(self.dim(e, dims, "`elem_offset`")?),
            _ => None,
        };
        let align = match s[ALIGN] {
            Some(e) => Some(self.int_arg(e, "`align`")?).filter(|&a| a > 0 && a != 64),
            None => None,
        };
        let factor = match s[OFFSET_FACTOR] {
            Some(e) => self.int_arg(e, "`offset_factor`")?,
            None => 0,
        };
        if factor != 0 && elem_offset.is_none() {
            // As TVM: an offset factor without an offset makes the offset a new variable
            // (printed back as `A.elem_offset`).
            let v = self.pool.new_var("elem_offset", index_t);
            self.spans.vars.set(v, super::super::sp(span));
            elem_offset = Some(self.pool.var_ref(v));
        }
        let offset_factor = Some(factor).filter(|&a| a > 1);
        let buffer_type = match s[BUFFER_TYPE] {
            Some(e) => match self.str_arg(e, "`buffer_type`")? {
                "auto" => Some("auto".to_string()),
                "default" | "" => None,
                other => {
                    return Err(self.err(e.span, format!("`buffer_type` must be `auto` or `default`, found `{other}`")));
                }
            },
            None => None,
        };
        let axis_separators = match s[AXIS_SEPARATORS] {
            Some(e) if !matches!(e.kind, ExprKind::None) => match e.as_sequence() {
                Some(items) => items.iter().map(|i| self.int_arg(i, "an axis separator")).collect::<LResult<_>>()?,
                None => return Err(self.err(e.span, "`axis_separators` must be a list of integers")),
            },
            _ => Vec::new(),
        };
        let mut data_value = None;
        let data = match s[DATA] {
            Some(e) if !matches!(e.kind, ExprKind::None) => {
                let v = self.expr(e)?;
                match self.as_var(v) {
                    Some(var) if self.pool.vars[var].dtype.is_handle() => var,
                    Some(_) => return Err(self.err(e.span, "`data` must be a handle")),
                    None if data_expr_ok && self.pool.dtype(v).is_handle() => {
                        data_value = Some(v);
                        self.data_var(name, dtype, &scope, span)
                    }
                    None => return Err(self.err(e.span, "`data` must be a handle variable")),
                }
            }
            _ => self.data_var(name, dtype, &scope, span),
        };
        let data = BufferData {
            name: name.to_string(),
            data,
            dtype,
            shape,
            strides,
            elem_offset,
            scope,
            align,
            offset_factor,
            buffer_type,
            axis_separators,
        };
        Ok(Built { data, data_value })
    }

    /// A new data pointer for buffer `name`.
    fn data_var(&mut self, name: &str, dtype: DataType, scope: &str, span: ast::Span) -> relax_ir::SymVar {
        let storage = if dtype.is_bool() { DataType::INT8 } else { dtype };
        let v = self.pool.vars.push(SymVarData::pointer(name, storage, scope));
        self.spans.vars.set(v, super::super::sp(span));
        v
    }

    /// A shape or stride list: a tuple or list of dims, or a single dim.
    fn dims(&mut self, e: &ast::Expr, dims: Dims, what: &str) -> LResult<Vec<PrimExpr>> {
        match e.as_sequence() {
            Some(items) => {
                let mut out = Vec::with_capacity(items.len());
                let mut failed = None;
                for d in items {
                    match self.dim(d, dims, what) {
                        Ok(v) => out.push(v),
                        Err(r) => failed = Some(r),
                    }
                }
                match failed {
                    Some(r) => Err(r),
                    None => Ok(out),
                }
            }
            None => Ok(vec![self.dim(e, dims, what)?]),
        }
    }

    /// Strides: dims, where a quoted name not yet defined is a new variable (the printer
    /// writes a buffer's own stride variables as `strides=("A_s0", ...)`).
    fn strides(&mut self, e: &ast::Expr, dims: Dims, index_t: DataType, span: ast::Span) -> LResult<Vec<PrimExpr>> {
        let Some(items) = e.as_sequence() else {
            return Err(self.err(e.span, "`strides` must be a tuple or a list"));
        };
        let mut out = Vec::with_capacity(items.len());
        for d in items {
            match &d.kind {
                ExprKind::Str(name) if super::params::is_identifier(name) && self.entry(name).is_none() => {
                    let v = self.define_var(name, index_t, span);
                    out.push(self.pool.var_ref(v));
                }
                _ => out.push(self.dim(d, dims, "a stride")?),
            }
        }
        Ok(out)
    }

    /// One dim: a bare or quoted name (which may define a variable), a quoted compound
    /// expression (`"n * T.int64(256)"`), or any integer expression.
    pub fn dim(&mut self, e: &ast::Expr, dims: Dims, what: &str) -> LResult<PrimExpr> {
        let v = match &e.kind {
            ExprKind::Name(n) if dims == Dims::Define => self.definable(n, e.span, false)?,
            ExprKind::Str(text) if dims == Dims::Define && super::params::is_identifier(text) => {
                self.definable(text, e.span, true)?
            }
            ExprKind::Str(text) => lower_quoted(self, text, e.span)?,
            _ => self.expr(e)?,
        };
        let t = self.pool.dtype(v);
        if !t.is_int() {
            return Err(self.err(e.span, format!("{what} must be an integer, found `{t}`")));
        }
        Ok(v)
    }

    /// A name in a definable position: the variable it names, or a new one when the
    /// function declares it, it is quoted, or it is a HEAD TypeVar.
    fn definable(&mut self, name: &str, span: ast::Span, quoted: bool) -> LResult<PrimExpr> {
        match self.entry(name) {
            Some(Entry::Var(v)) => return Ok(self.pool.var_ref(v)),
            Some(Entry::Buffer(_)) => {
                return Err(self.err(span, format!("buffer `{name}` is not a scalar value")));
            }
            None => {}
        }
        let declared = self.decls.get(name).copied();
        if declared.is_some() || quoted || self.is_typevar(name) {
            let v = self.define_function_var(name, declared.unwrap_or(DataType::INT64), span);
            return Ok(self.pool.var_ref(v));
        }
        Err(self.err(span, format!("undefined variable `{name}`")))
    }
}
