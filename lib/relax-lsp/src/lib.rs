//! The relax language server: editor support for `.rlx` files over the Language Server
//! Protocol, built on `lsp-server` and `lsp-types` (from the rust-analyzer project).
//!
//! The `relax-lsp` binary (`tools/relax-lsp`) runs [`run`] over stdio; tests run it over an
//! in-memory [`lsp_server::Connection`]. What it answers:
//!
//! * **Diagnostics** on open and on every change: the parser's, type inference's and the
//!   verifier's errors, with the messages `relax-opt` prints ([`diagnostics`]).
//! * **Hover**: the inferred type of a variable or call, the dtype and role of a symbolic or
//!   TIR variable, the shape of a buffer, the signature of a function ([`hover`]).
//! * **Go to definition** of variables, functions, symbolic variables and buffers
//!   ([`definition`]).
//! * **Document symbols**: functions with their bindings, dataflow blocks and TIR blocks
//!   ([`symbols`]).
//! * **Formatting**: the canonical printer's text ([`format`]).
//!
//! Positions are UTF-16 code units ([`line_index`]). Nothing here panics on any input;
//! each request also runs under `catch_unwind` as a last resort. See `docs/editor.md`.

pub mod analysis;
pub mod definition;
pub mod diagnostics;
pub mod format;
pub mod hover;
pub mod line_index;
pub mod lookup;
mod server;
pub mod symbols;

pub use analysis::Analysis;
pub use server::{Exit, capabilities, run};
