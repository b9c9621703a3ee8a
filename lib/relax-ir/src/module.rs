//! The IR module: named functions of every kind plus module-wide constants.

use relax_entity::PrimaryMap;

use crate::attrs::{AttrValue, Attrs};
use crate::dtype::DataType;
use crate::entities::{Constant, Global, Ty};
use crate::pool::Pool;
use crate::relax::RelaxFunction;
use crate::span::Span;
use crate::tir::PrimFunc;

/// How the module was (or is to be) written as text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ModuleForm {
    /// `@I.ir_module class Module:` — the normal form.
    #[default]
    Module,
    /// A single function printed alone (`Function.script()`): no class, no `cls`, other
    /// functions called by bare name.
    SingleFunction,
}

/// An extern function declared as a class attribute: `f = R.ExternFunc("symbol")`.
#[derive(Clone, Debug)]
pub struct ExternFunc {
    /// The symbol looked up at run time.
    pub symbol: String,
    /// Pool holding `ty`.
    pub pool: Pool,
    /// Its type, when not the default opaque impure callable.
    pub ty: Option<Ty>,
}

/// A function of the module.
#[derive(Clone, Debug)]
pub enum Func {
    /// A Relax function.
    Relax(Box<RelaxFunction>),
    /// A TensorIR PrimFunc.
    Prim(Box<PrimFunc>),
    /// An extern function.
    Extern(ExternFunc),
    /// A name referenced by single-function text but defined outside it.
    Unresolved,
    /// A deleted function (a tombstone until the module is compacted).
    Removed,
}

/// A named slot of the module.
#[derive(Clone, Debug)]
pub struct GlobalData {
    /// The global name (`cls.<name>`).
    pub name: String,
    /// The function.
    pub func: Func,
}

/// Where a constant's value comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstPayload {
    /// Little-endian element bytes in row-major order.
    Data(Vec<u8>),
    /// A `metadata[...]` reference whose data was not supplied; it cannot be evaluated.
    Opaque,
}

/// A constant tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstData {
    /// Element type (`void` when unknown for an opaque constant).
    pub dtype: DataType,
    /// Static shape, when known.
    pub shape: Option<Vec<i64>>,
    /// Its data.
    pub payload: ConstPayload,
}

impl ConstData {
    /// True for a 0-d constant that prints inline as `R.const(v, "dtype")`.
    pub fn is_inline_scalar(&self) -> bool {
        matches!(self.payload, ConstPayload::Data(_))
            && self.shape.as_deref() == Some(&[])
            && (matches!(self.dtype.code, crate::dtype::TypeCode::Int) && matches!(self.dtype.bits, 8 | 16 | 32 | 64)
                || matches!(self.dtype.code, crate::dtype::TypeCode::Float) && matches!(self.dtype.bits, 16 | 32 | 64)
                || self.dtype.is_bool())
            && self.dtype.lanes == 1
    }
}

/// One `I.vdevice(target, id, scope)` entry of `I.module_global_infos`.
#[derive(Clone, Debug, PartialEq)]
pub struct VDeviceInfo {
    /// The target (a dict or a string).
    pub target: AttrValue,
    /// The device id.
    pub vdevice_id: i64,
    /// The memory scope.
    pub scope: String,
}

/// A module.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// Functions by global handle.
    pub globals: PrimaryMap<Global, GlobalData>,
    /// Constants.
    pub constants: PrimaryMap<Constant, ConstData>,
    /// `I.module_attrs({...})`.
    pub attrs: Attrs,
    /// `I.module_global_infos({"vdevice": [...]})`.
    pub vdevices: Vec<VDeviceInfo>,
    /// How the module is written.
    pub form: ModuleForm,
    /// The span of the class (or the single function).
    pub span: Span,
}

impl Module {
    /// An empty module.
    pub fn new() -> Module {
        Module::default()
    }
    /// The global named `name` (not removed).
    pub fn lookup(&self, name: &str) -> Option<Global> {
        self.globals.iter().find(|(_, g)| g.name == name && !matches!(g.func, Func::Removed)).map(|(k, _)| k)
    }
    /// Adds a function and returns its global.
    pub fn add(&mut self, name: impl Into<String>, func: Func) -> Global {
        self.globals.push(GlobalData { name: name.into(), func })
    }
    /// Live globals (not removed) in creation order.
    pub fn live(&self) -> impl Iterator<Item = (Global, &GlobalData)> {
        self.globals.iter().filter(|(_, g)| !matches!(g.func, Func::Removed))
    }
    /// The Relax function of `g`.
    pub fn relax(&self, g: Global) -> Option<&RelaxFunction> {
        match &self.globals.get(g)?.func {
            Func::Relax(f) => Some(f),
            _ => None,
        }
    }
    /// The Relax function of `g`, for writing.
    pub fn relax_mut(&mut self, g: Global) -> Option<&mut RelaxFunction> {
        match &mut self.globals.get_mut(g)?.func {
            Func::Relax(f) => Some(f),
            _ => None,
        }
    }
    /// The PrimFunc of `g`.
    pub fn prim_func(&self, g: Global) -> Option<&PrimFunc> {
        match &self.globals.get(g)?.func {
            Func::Prim(f) => Some(f),
            _ => None,
        }
    }
    /// The PrimFunc of `g`, for writing.
    pub fn prim_func_mut(&mut self, g: Global) -> Option<&mut PrimFunc> {
        match &mut self.globals.get_mut(g)?.func {
            Func::Prim(f) => Some(f),
            _ => None,
        }
    }
    /// Globals in TVM's print order: PrimFuncs, then extern functions, then Relax
    /// functions, each group sorted by name (byte order); a function named `main` last.
    pub fn print_order(&self) -> Vec<Global> {
        let rank = |g: &GlobalData| match g.func {
            Func::Prim(_) => 0,
            Func::Extern(_) => 1,
            _ => 2,
        };
        let mut v: Vec<Global> = self
            .globals
            .iter()
            .filter(|(_, g)| matches!(g.func, Func::Relax(_) | Func::Prim(_) | Func::Extern(_)))
            .map(|(k, _)| k)
            .collect();
        v.sort_by(|&a, &b| {
            let (ga, gb) = (&self.globals[a], &self.globals[b]);
            (ga.name == "main", rank(ga), ga.name.as_bytes()).cmp(&(gb.name == "main", rank(gb), gb.name.as_bytes()))
        });
        v
    }
    /// True for single-function text.
    pub fn is_single_function(&self) -> bool {
        self.form == ModuleForm::SingleFunction
    }
}
