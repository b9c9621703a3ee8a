//! Compiles `grammar/relax.lalrpop` (at the repository root, outside this crate) into
//! `OUT_DIR/relax.rs`, which `src/lib.rs` includes with `lalrpop_mod!`. The generated code
//! never lands in the source tree.

use std::env;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let grammar = manifest.join("../../grammar/relax.lalrpop");
    if let Err(error) =
        lalrpop::Configuration::new().set_out_dir(&out).emit_rerun_directives(true).process_file(&grammar)
    {
        eprintln!("error: cannot compile {}: {error}", grammar.display());
        std::process::exit(1);
    }
}
