//! The module-wide tables compiled code refers to while it is being compiled: constants
//! (module tensors once each), strings (interned), op attribute sets, source spans
//! (interned; entry 0 is "no location") and local functions.

use std::collections::HashMap;

use relax_entity::EntityRef;
use relax_ir::{Module, Span};

use super::bytecode::{Constant, Function};

/// The module-wide tables the functions' code refers to.
#[derive(Default)]
pub(crate) struct Tables {
    pub constants: Vec<Constant>,
    const_of: HashMap<u32, u32>,
    pub strings: Vec<String>,
    string_of: HashMap<String, u32>,
    pub attrs: Vec<relax_ir::Attrs>,
    /// Local functions, compiled after the module's Relax functions: their indices
    /// start at `local_base`.
    pub locals: Vec<Option<Function>>,
    pub local_base: u32,
    /// Spans; entry 0 is "no location".
    pub spans: Vec<Span>,
    span_of: HashMap<Span, u32>,
}

impl Tables {
    pub fn new() -> Tables {
        let mut t = Tables::default();
        t.spans.push(Span::NONE);
        t.span_of.insert(Span::NONE, 0);
        t
    }

    pub fn string(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.string_of.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.to_string());
        self.string_of.insert(s.to_string(), i);
        i
    }

    pub fn span(&mut self, s: Span) -> u32 {
        if let Some(&i) = self.span_of.get(&s) {
            return i;
        }
        let i = self.spans.len() as u32;
        self.spans.push(s);
        self.span_of.insert(s, i);
        i
    }

    pub fn constant(&mut self, c: Constant) -> u32 {
        self.constants.push(c);
        self.constants.len() as u32 - 1
    }

    pub fn module_constant(&mut self, m: &Module, c: relax_ir::Constant) -> u32 {
        let key = c.index() as u32;
        if let Some(&i) = self.const_of.get(&key) {
            return i;
        }
        let cd = &m.constants[c];
        let data = match &cd.payload {
            relax_ir::ConstPayload::Data(b) => Some(b.clone()),
            _ => None,
        };
        let i = self.constant(Constant::Tensor {
            index: key,
            dtype: cd.dtype,
            shape: cd.shape.clone().unwrap_or_default(),
            data,
        });
        self.const_of.insert(key, i);
        i
    }
}
