//! Dialect hints: which TVM release printed the text (`text-format.md` §2).
//!
//! The header comments say whether TIR is spelled the classic way (`tir as T`), and the
//! HEAD dialect declares module-level `n = TypeVar("n")` names that every function uses
//! as its own symbolic variables.

use crate::ast;

/// What the file's header and module-level statements say about its dialect.
#[derive(Clone, Debug, Default)]
pub(crate) struct Dialect {
    /// The header imports `tir as T` (TVM ≤ 0.23).
    pub classic_header: bool,
    /// Module-level `TypeVar` names (TVM HEAD), in order.
    pub typevars: Vec<String>,
}

impl Dialect {
    /// Reads the header comments.
    pub fn from_header(header: &[ast::Comment]) -> Dialect {
        let classic_header = header.iter().any(|c| {
            let b = c.body();
            b.starts_with("from tvm.script import")
                && b.split_whitespace().collect::<Vec<_>>().ends_with(&["tir", "as", "T"])
        });
        Dialect { classic_header, typevars: Vec::new() }
    }
    /// True when `name` was declared `name = TypeVar("name")` at module level.
    pub fn is_typevar(&self, name: &str) -> bool {
        self.typevars.iter().any(|t| t == name)
    }
}

/// Recognises `n = TypeVar("n")` and returns the name.
pub(crate) fn typevar_decl(stmt: &ast::Stmt) -> Option<&str> {
    let ast::StmtKind::Assign { targets, annotation: None, value } = &stmt.kind else { return None };
    let [target] = targets.as_slice() else { return None };
    let name = target.as_name()?;
    let (call, callee) = value.as_dotted_call()?;
    if callee != "TypeVar" && callee != "typing.TypeVar" {
        return None;
    }
    match call.args.first().and_then(|a| a.as_str()) {
        Some(s) if s == name => Some(name),
        _ => None,
    }
}
