//! The bridge from the driver to the printer and the verifier.

use relax_ir::Module;
use relax_ir::diag::Diagnostic;
use relax_pass::VerifyScope;

/// The canonical text of a module.
pub fn print_module(m: &Module) -> String {
    relax_ir::printer::print_module(m)
}

/// Runs the verifier; its errors become diagnostics.
pub fn verify_diagnostics(m: &Module) -> Result<(), Vec<Diagnostic>> {
    relax_ir::verify::verify_module(m).map_err(|errs| errs.iter().map(|e| e.to_diagnostic(m)).collect())
}

/// Runs the verifier on what a pass could change (the pass manager's verifier): the whole
/// module, or one function; its errors become diagnostics.
pub fn verify_scope_diagnostics(m: &Module, scope: VerifyScope) -> Result<(), Vec<Diagnostic>> {
    let result = match scope {
        VerifyScope::Module => relax_ir::verify::verify_module(m),
        VerifyScope::Function(g) => relax_ir::verify::verify_function(m, g),
    };
    result.map_err(|errs| errs.iter().map(|e| e.to_diagnostic(m)).collect())
}

/// Prints IR dumps around passes (`--print-ir-*`).
pub struct IrPrinter {
    /// `--print-ir-after-all`.
    pub after_all: bool,
    /// `--print-ir-after=NAME`.
    pub after: Vec<String>,
    /// `--print-ir-before-all`.
    pub before_all: bool,
    /// `--print-ir-after-change`.
    pub only_changed: bool,
    /// The dumps so far.
    pub out: String,
}

impl IrPrinter {
    /// Appends one dump. The header starts with the split marker, so a dump can be fed
    /// back through `--split-input-file`.
    pub fn dump(&mut self, when: &str, pass: &str, scope: &str, m: &Module) {
        let scope = if scope.is_empty() { String::new() } else { format!(" ({scope})") };
        self.out.push_str(&format!("# ----- IR Dump {when} {pass}{scope} -----\n"));
        self.out.push_str(&print_module(m));
    }
}
