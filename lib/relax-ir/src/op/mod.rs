//! The operator table: one entry per Relax op, shared by the parser, the printer, type
//! inference, the interpreter and legalization.
//!
//! An entry records the op's text name (`relax.nn.softmax` prints as `R.nn.softmax`) and
//! its parameters in the order of TVM's Python signature. Each parameter is either a
//! Relax **argument** (printed positionally) or an **attribute** (printed as a keyword,
//! defaults included, in declaration order). The parser uses the kinds to accept the
//! convenience spellings of hand-written text (`R.reshape(x, (3, 2))`,
//! `R.strided_slice(x, axes=[1], begin=[0], end=[2])`, `R.expand_dims(x, 0)`) and to
//! fill in defaults, so both spellings give the same call.
//!
//! Ops missing from the table are still accepted (see [`OpRef::Custom`]): their arguments
//! and keywords are kept as written and their type comes from the binding's annotation.
//!
//! **Op identity is an [`OpId`].** The table declares, with each entry, the constant that
//! names the op in code ([`ops`]: `ops::CALL_TIR` is `relax.call_tir`, `ops::NN_SOFTMAX`
//! is `relax.nn.softmax`); code compares ids, never names. What other layers know about
//! an op (its type-inference rule, legalization, pattern kind, reference kernel) lives in
//! dense tables keyed by id ([`OpTable`]), built at compile time from each layer's
//! per-family `const fn` lookups by [`op_table_of!`], which also rejects an op claimed by
//! two families.

/// Declares the op table: `IDENT = op("relax.name", params),` entries become the
/// constants of [`ops`], [`OPS`] (indexed by [`OpId`]), [`OP_COUNT`] and [`lookup`].
macro_rules! op_table {
    ($($id:ident = $ctor:ident($name:literal, $($rest:tt)*),)*) => {
        /// The position of each op in [`OPS`].
        #[allow(non_camel_case_types, clippy::upper_case_acronyms, reason = "named after the ops")]
        #[repr(u16)]
        enum Index {
            $($id,)*
            Count,
        }

        /// The ids of the ops of the table, one constant per op.
        pub mod ops {
            use super::super::OpId;
            $(
                #[doc = concat!("`", $name, "`")]
                pub const $id: OpId = OpId(super::Index::$id as u16);
            )*
        }

        /// The number of ops in the table.
        pub const OP_COUNT: usize = Index::Count as usize;

        /// Every op, indexed by [`OpId`].
        pub static OPS: [OpDef; OP_COUNT] = [$($ctor($name, $($rest)*),)*];

        /// Finds an op by full name (`relax.add`).
        pub fn lookup(name: &str) -> Option<OpId> {
            match name {
                $($name => Some(ops::$id),)*
                _ => None,
            }
        }
    };
}

mod table;

use crate::DataType;
use crate::attrs::{AttrValue, FloatBits};

pub use table::{OP_COUNT, OPS, lookup, ops};

/// The identity of an op of the table: its index in [`OPS`]. The constants of [`ops`]
/// name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpId(pub u16);

/// A table keyed by op: what one layer knows about each op (`None` for ops it has
/// nothing for). Built at compile time by [`op_table_of!`].
#[derive(Clone, Copy, Debug)]
pub struct OpTable<T: Copy + 'static>(pub [Option<T>; OP_COUNT]);

impl<T: Copy + 'static> OpTable<T> {
    /// The entry of `id` (`None` for an id out of range).
    pub fn get(&self, id: OpId) -> Option<T> {
        self.0.get(id.index()).copied().flatten()
    }
}

/// Builds an [`OpTable`] at compile time from per-family lookups, each a
/// `const fn(OpId) -> Option<T>`: `op_table_of!(Rule; unary::rule, binary::rule)`. An op
/// that two families claim is a compile-time error.
#[macro_export]
macro_rules! op_table_of {
    ($ty:ty; $($family:path),+ $(,)?) => {{
        const N: usize = $crate::op::OP_COUNT;
        let mut table: [Option<$ty>; N] = [None; N];
        let mut i = 0;
        while i < N {
            let id = $crate::op::OpId(i as u16);
            let mut claimed = 0;
            $(
                if let Some(entry) = $family(id) {
                    table[i] = Some(entry);
                    claimed += 1;
                }
            )+
            assert!(claimed <= 1, "an op has entries in two families of one table");
            i += 1;
        }
        $crate::op::OpTable(table)
    }};
}

/// An op used as a callee.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OpRef {
    /// An op of the table.
    Known(OpId),
    /// An op the table does not know, by full name (`relax.nn.conv2d`).
    Custom(String),
}

impl OpRef {
    /// The id of a known op.
    pub fn id(&self) -> Option<OpId> {
        match self {
            OpRef::Known(id) => Some(*id),
            OpRef::Custom(_) => None,
        }
    }
    /// True when this is the op `id`.
    pub fn is(&self, id: OpId) -> bool {
        self.id() == Some(id)
    }
    /// True when this is one of the ops `ids`.
    pub fn is_one_of(&self, ids: &[OpId]) -> bool {
        self.id().is_some_and(|id| ids.contains(&id))
    }
    /// The full name (`relax.add`).
    pub fn name(&self) -> &str {
        match self {
            OpRef::Known(id) => id.def().name,
            OpRef::Custom(n) => n,
        }
    }
    /// The table entry of a known op.
    pub fn def(&self) -> Option<&'static OpDef> {
        match self {
            OpRef::Known(id) => Some(id.def()),
            OpRef::Custom(_) => None,
        }
    }
}

impl OpId {
    /// The position in [`OPS`].
    pub const fn index(self) -> usize {
        self.0 as usize
    }
    /// The table entry.
    pub fn def(self) -> &'static OpDef {
        &OPS[usize::from(self.0)]
    }
    /// The full name.
    pub fn name(self) -> &'static str {
        self.def().name
    }
}

/// How a Relax argument may be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// Any Relax expression (usually a tensor).
    Expr,
    /// A tuple of tensors; a Python list or tuple builds it (`R.concat([a, b])`).
    TensorTuple,
    /// A shape; a tuple or list of dims builds `R.shape([...])`.
    Shape,
    /// A scalar; a number or TIR expression builds `R.prim_value(...)`.
    PrimValue,
    /// A tuple of scalars; a list of numbers builds `(R.prim_value(a), ...)`.
    PrimValueTuple,
    /// A string; a Python string builds `R.str(...)`.
    Str,
    /// A dtype; a Python string builds `R.dtype(...)`.
    DType,
    /// A shape of the given rank (the output size of `R.image.resize2d`): as [`ArgKind::Shape`],
    /// and an integer or a one-element tuple is repeated rank times (`8` → `R.shape([8, 8])`).
    ShapeOfRank(u8),
    /// Everything that follows, as written (variadic ops such as `R.call_pure_packed`).
    Variadic,
    /// A packed function: a string names an extern function (`R.ExternFunc`).
    Callee,
    /// A string stored as the op's first Relax arguments but written as the keyword
    /// `format=R.str("...")` after the others (`R.print`, `R.assert_op`).
    FormatStr,
}

/// How an attribute is written and normalised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrKind {
    /// An integer.
    Int,
    /// An integer or `None`.
    OptInt,
    /// A list of integers; a single integer is wrapped (`axis=1` → `[1]`).
    IntList,
    /// A list of integers or `None`; a single integer is wrapped.
    OptIntList,
    /// An integer or a list of integers, kept as written (`indices_or_sections`).
    IntOrIntList,
    /// A double (`epsilon`).
    Float,
    /// A float32 TIR literal or `None` (`scale=T.float32(0.5)`).
    OptPrimFloat,
    /// A boolean.
    Bool,
    /// A string.
    Str,
    /// A string or `None`.
    OptStr,
    /// A dtype string; `None` and a missing value mean `"void"`.
    DType,
    /// One integer per spatial axis of an op of the given rank (`strides`, `dilation`,
    /// `pool_size`): an integer or a one-element list is repeated rank times
    /// (`strides=2` → `[2, 2]` for conv2d), as TVM's Python wrappers and C++ constructors do.
    Spatial(u8),
    /// As [`AttrKind::Spatial`], or `None` (`output_size` of the adaptive pools).
    OptSpatial(u8),
    /// The padding of an op of the given spatial rank, completed to `2 * rank` entries (all
    /// befores, then all afters) as TVM's `GetCompletePadding1D/2D/3D` do: an integer or a
    /// one-element list pads every side, `rank` entries pad both sides of each axis.
    Padding(u8),
    /// A region of interest of `2 * rank` float32 literals (`roi` of the resize ops): a float
    /// is repeated, a list's numbers become float32, `None` or a missing value means zeros.
    Roi(u8),
    /// Anything, kept as written.
    Any,
}

impl AttrKind {
    /// Brings a value already lowered to this kind's shape (an integer list for the spatial
    /// kinds) into the form TVM stores; `Err` says what was expected. Identity for the
    /// kinds that TVM stores as written.
    pub fn complete(self, v: AttrValue) -> Result<AttrValue, String> {
        let ints = |l: Vec<i64>| AttrValue::List(l.into_iter().map(AttrValue::Int).collect());
        match self {
            AttrKind::Spatial(n) | AttrKind::OptSpatial(n) => {
                if matches!(v, AttrValue::None) && matches!(self, AttrKind::OptSpatial(_)) {
                    return Ok(v);
                }
                let n = usize::from(n);
                match v.as_int_list() {
                    Some(l) if l.len() == 1 => Ok(ints(vec![l[0]; n])),
                    Some(l) if l.len() == n => Ok(ints(l)),
                    Some(l) if n == 1 => Err(format!("1 integer, found {}", l.len())),
                    Some(l) => Err(format!("1 or {n} integers, found {}", l.len())),
                    None => Err("a list of integers".into()),
                }
            }
            AttrKind::Padding(n) => {
                let Some(l) = v.as_int_list() else { return Err("a list of integers".into()) };
                let n = usize::from(n);
                match l.len() {
                    1 => Ok(ints(vec![l[0]; 2 * n])),
                    k if k == n && n > 1 => Ok(ints(l.iter().chain(&l).copied().collect())),
                    k if k == 2 * n => Ok(ints(l)),
                    k if n == 1 => Err(format!("1 or 2 integers, found {k}")),
                    k => Err(format!("1, {n} or {} integers, found {k}", 2 * n)),
                }
            }
            AttrKind::Roi(n) => {
                let f32 = |f: f64| AttrValue::PrimFloat(DataType::FLOAT32, FloatBits::new(f));
                match v {
                    AttrValue::None => Ok(AttrValue::List(vec![f32(0.0); 2 * usize::from(n)])),
                    AttrValue::Float(f) | AttrValue::PrimFloat(_, f) => {
                        Ok(AttrValue::List(vec![f32(f.get()); 2 * usize::from(n)]))
                    }
                    AttrValue::List(items) => items
                        .iter()
                        .map(|i| match i {
                            AttrValue::Bool(_) => None,
                            i => i.as_f64().map(f32),
                        })
                        .collect::<Option<Vec<_>>>()
                        .map(AttrValue::List)
                        .ok_or_else(|| "a float or a list of numbers".to_string()),
                    _ => Err("a float or a list of numbers".into()),
                }
            }
            _ => Ok(v),
        }
    }
}

/// A default value in the table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dflt {
    /// No default: the attribute must be given.
    Required,
    /// `None`.
    None,
    /// An integer.
    Int(i64),
    /// A double.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A string (also dtypes).
    Str(&'static str),
    /// A list of integers.
    IntList(&'static [i64]),
    /// The value of the named earlier attribute (`out_layout` defaults to `data_layout`).
    SameAs(&'static str),
}

impl Dflt {
    /// The attribute value of the default, or `None` when required or taken from another
    /// attribute.
    pub fn value(self) -> Option<AttrValue> {
        Some(match self {
            Dflt::Required | Dflt::SameAs(_) => return None,
            Dflt::None => AttrValue::None,
            Dflt::Int(v) => AttrValue::Int(v),
            Dflt::Float(v) => AttrValue::Float(FloatBits::new(v)),
            Dflt::Bool(b) => AttrValue::Bool(b),
            Dflt::Str(s) => AttrValue::Str(s.to_string()),
            Dflt::IntList(v) => AttrValue::List(v.iter().map(|&i| AttrValue::Int(i)).collect()),
        })
    }
}

/// The default of a Relax argument, as TVM's Python op wrappers fill it in before building
/// the call (so TVM prints it: `R.triu(x)` is `R.triu(x, R.prim_value(0))`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgDflt {
    /// `R.prim_value(v)` of dtype int64 (`k=0` of `R.triu`; a Python `True` is `1`).
    Prim(i64),
    /// The value of the named earlier argument (`m` of `R.eye` defaults to `n`).
    SameAs(&'static str),
    /// The value written for the named earlier argument, which then takes `R.prim_value(v)`
    /// instead: `R.arange(end)` is `R.arange(0, end)`.
    TakeFrom(&'static str, i64),
}

/// What a parameter is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamRole {
    /// A Relax argument; `optional` ones may be left out (`strides`, `bias`).
    Arg {
        /// How it may be written.
        kind: ArgKind,
        /// Whether it may be absent from a call.
        optional: bool,
        /// What the parser fills in when the text leaves it out (TVM's Python wrapper's
        /// default); `None` when it must be written (or, if `optional`, stays absent).
        default: Option<ArgDflt>,
    },
    /// An attribute.
    Attr {
        /// How it is written.
        kind: AttrKind,
        /// Its default.
        default: Dflt,
    },
}

/// One parameter of an op, in Python-signature order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Param {
    /// The keyword name.
    pub name: &'static str,
    /// Argument or attribute.
    pub role: ParamRole,
}

/// The coarse role of an op, for special handling by the parser and printer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpClass {
    /// An ordinary computation.
    Compute,
    /// `call_tir`, `call_tir_inplace`, `call_tir_with_grad`, `call_dps_packed`: a callee,
    /// a tuple of arguments and `out_sinfo`.
    DpsCall,
    /// `call_pure_packed`, `call_inplace_packed`, `call_builtin_with_ctx`: a packed function
    /// and its arguments, typed by `sinfo_args`.
    PackedCall,
    /// Memory and VM ops.
    Memory,
    /// Effects: print, assert, kills.
    Effect,
}

/// A table entry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpDef {
    /// The full name, `relax.` + the text path after `R.`.
    pub name: &'static str,
    /// Parameters in Python-signature order.
    pub params: &'static [Param],
    /// The op's role.
    pub class: OpClass,
    /// False for ops with side effects (not allowed in dataflow blocks).
    pub pure: bool,
}

/// Attributes of `id` that a TVM release newer than the table's signatures added
/// (`align_corners` of `R.image.affine_grid` in 0.27). The parser keeps them as written,
/// after the table's attributes; any other keyword the table does not list is an error.
pub fn newer_attrs(id: OpId) -> &'static [&'static str] {
    match id {
        ops::IMAGE_AFFINE_GRID => &["align_corners"],
        _ => &[],
    }
}

impl OpDef {
    /// The text spelling after `R.` (`nn.softmax`).
    pub fn text_name(&self) -> &'static str {
        self.name.strip_prefix("relax.").unwrap_or(self.name)
    }
    /// The Relax arguments, in order.
    pub fn args(&self) -> impl Iterator<Item = &'static Param> + '_ {
        self.params.iter().filter(|p| matches!(p.role, ParamRole::Arg { .. }))
    }
    /// The attributes, in printing order.
    pub fn attrs(&self) -> impl Iterator<Item = &'static Param> + '_ {
        self.params.iter().filter(|p| matches!(p.role, ParamRole::Attr { .. }))
    }
    /// The attribute parameter named `name`.
    pub fn attr(&self, name: &str) -> Option<&'static Param> {
        self.attrs().find(|p| p.name == name)
    }
    /// True when the op takes a variable number of Relax arguments.
    pub fn is_variadic(&self) -> bool {
        self.params.iter().any(|p| matches!(p.role, ParamRole::Arg { kind: ArgKind::Variadic, .. }))
    }
}

/// An [`OpRef`] for a full name: known if in the table, custom otherwise.
pub fn op_ref(name: &str) -> OpRef {
    match lookup(name) {
        Some(id) => OpRef::Known(id),
        None => OpRef::Custom(name.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_prefixed() {
        let mut seen = std::collections::HashSet::new();
        for (i, d) in OPS.iter().enumerate() {
            assert_eq!(lookup(d.name), Some(OpId(i as u16)), "{}", d.name);
            assert!(d.name.starts_with("relax."), "{}", d.name);
            assert!(seen.insert(d.name), "duplicate op {}", d.name);
            let mut names = std::collections::HashSet::new();
            for p in d.params {
                assert!(names.insert(p.name), "duplicate param {} of {}", p.name, d.name);
            }
        }
        assert_eq!(lookup("relax.nn.softmax").map(|id| id.name()), Some("relax.nn.softmax"));
        assert!(lookup("relax.nope").is_none());
    }

    #[test]
    fn defaults_are_in_stored_form() {
        // TVM stores defaults completed too (`padding=(0, 0)` of conv2d is `[0, 0, 0, 0]`).
        for d in OPS {
            for p in d.attrs() {
                let ParamRole::Attr { kind, default } = p.role else { continue };
                // A missing `roi` is `None` in the table and zeros once completed.
                if matches!(kind, AttrKind::Roi(_)) {
                    continue;
                }
                if let Some(v) = default.value() {
                    assert_eq!(kind.complete(v.clone()).as_ref(), Ok(&v), "{}.{}", d.name, p.name);
                }
            }
        }
    }

    #[test]
    fn spatial_attrs_complete_like_tvm() {
        let l = |v: &[i64]| AttrValue::List(v.iter().map(|&i| AttrValue::Int(i)).collect());
        let c = |k: AttrKind, v: &[i64]| k.complete(l(v));
        assert_eq!(c(AttrKind::Spatial(2), &[2]), Ok(l(&[2, 2])));
        assert_eq!(c(AttrKind::Spatial(3), &[1, 2, 3]), Ok(l(&[1, 2, 3])));
        assert_eq!(c(AttrKind::Spatial(2), &[1, 2, 3]), Err("1 or 2 integers, found 3".into()));
        assert_eq!(c(AttrKind::Padding(1), &[1]), Ok(l(&[1, 1])));
        assert_eq!(c(AttrKind::Padding(1), &[1, 2]), Ok(l(&[1, 2])));
        assert_eq!(c(AttrKind::Padding(2), &[1, 2]), Ok(l(&[1, 2, 1, 2])));
        assert_eq!(c(AttrKind::Padding(3), &[1, 2, 3]), Ok(l(&[1, 2, 3, 1, 2, 3])));
        assert_eq!(c(AttrKind::Padding(2), &[1, 2, 3]), Err("1, 2 or 4 integers, found 3".into()));
        assert_eq!(AttrKind::OptSpatial(2).complete(AttrValue::None), Ok(AttrValue::None));
        let f = |x: f64| AttrValue::PrimFloat(DataType::FLOAT32, FloatBits::new(x));
        assert_eq!(AttrKind::Roi(1).complete(AttrValue::None), Ok(AttrValue::List(vec![f(0.0); 2])));
        assert_eq!(
            AttrKind::Roi(1).complete(AttrValue::Float(FloatBits::new(0.5))),
            Ok(AttrValue::List(vec![f(0.5); 2]))
        );
        assert_eq!(AttrKind::Roi(1).complete(l(&[0, 1])), Ok(AttrValue::List(vec![f(0.0), f(1.0)])));
        assert!(AttrKind::Roi(1).complete(AttrValue::Str("a".into())).is_err());
    }

    #[test]
    fn argument_defaults_name_earlier_arguments() {
        for d in OPS {
            let args: Vec<&Param> = d.args().collect();
            for (i, p) in args.iter().enumerate() {
                let ParamRole::Arg { optional, default, .. } = p.role else { continue };
                assert!(!(optional && default.is_some()), "{}.{}: optional with a default", d.name, p.name);
                if let Some(ArgDflt::SameAs(other) | ArgDflt::TakeFrom(other, _)) = default {
                    assert!(args[..i].iter().any(|q| q.name == other), "{}.{} refers to `{other}`", d.name, p.name);
                }
            }
        }
        let eye = lookup("relax.eye").unwrap().def();
        let m = eye.args().find(|p| p.name == "m").unwrap();
        assert!(matches!(m.role, ParamRole::Arg { default: Some(ArgDflt::SameAs("n")), .. }));
    }

    #[test]
    fn required_attrs_have_no_default_value() {
        let d = lookup("relax.astype").unwrap().def();
        let p = d.attr("dtype").unwrap();
        assert!(matches!(p.role, ParamRole::Attr { default: Dflt::Required, .. }));
        let m = lookup("relax.matmul").unwrap().def();
        assert_eq!(m.attrs().map(|p| p.name).collect::<Vec<_>>(), ["out_dtype"]);
    }
}
