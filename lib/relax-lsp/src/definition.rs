//! Go to definition: Relax variables (their parameter or binding), module functions
//! (`cls.f`, bare calls in single-function text), symbolic variables (their defining
//! occurrence, by the parser's rule), TIR variables (loop, block axis, parameter) and
//! buffers (their declaration).

use relax_ir::Func;

use crate::analysis::Analysis;
use crate::lookup::{Target, function_name_span, refine, resolve, sym_var_definition, top_functions};

/// The byte range of the definition of the word at `offset`.
pub fn definition(a: &Analysis, offset: usize) -> Option<(usize, usize)> {
    let (site, target) = resolve(a, offset)?;
    let m = site.module;
    let name = site.word.name.as_str();
    match target {
        Target::RelaxVar(g, v) => {
            let f = m.relax(g)?;
            let span = *f.spans.vars.get(v);
            if span.is_none() {
                return None;
            }
            let var_name = &f.vars.get(v)?.name;
            Some(refine(a, span, var_name))
        }
        Target::Function(g) => {
            let gname = &m.globals.get(g)?.name;
            if let Some(s) = function_name_span(site.file, gname) {
                return Some((s.start as usize, s.end as usize));
            }
            let span = match &m.globals.get(g)?.func {
                Func::Relax(f) => f.spans.func,
                Func::Prim(p) => p.spans.func,
                _ => return None,
            };
            (!span.is_none()).then_some((span.start as usize, span.end as usize))
        }
        Target::SymVar(g, v) => {
            if let Some(p) = m.prim_func(g) {
                let span = *p.spans.vars.get(v);
                return (!span.is_none()).then(|| refine(a, span, name));
            }
            let gname = &m.globals.get(g)?.name;
            let (_, def) = top_functions(site.file).into_iter().find(|(_, d)| &d.name.name == gname)?;
            let s = sym_var_definition(site.file, def, name)?;
            Some((s.start as usize, s.end as usize))
        }
        Target::Buffer(g, b) => {
            let p = m.prim_func(g)?;
            let span = *p.spans.buffers.get(b);
            let buffer_name = &p.buffers.get(b)?.name;
            (!span.is_none()).then(|| refine(a, span, buffer_name))
        }
        Target::Expr(..) => None,
    }
}
