//! The RUN-line shell: a small sh subset, parsed into [`Script`] and run by [`exec`].
//!
//! Supported: words with `'…'`, `"…"` and `\` quoting; pipes `a | b`; `&&`, `||`, `;`;
//! redirections `> f`, `>> f`, `< f`, `2> f`, `2>> f`, `2>&1`. Anything else that a shell
//! would give meaning to (`$`, backquotes, globs, subshells, `&`) is an error.

pub mod exec;
mod parse;

pub use parse::parse;

/// A parsed command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Script {
    /// One pipeline.
    Pipeline(Vec<Command>),
    /// Two scripts joined by `&&`, `||` or `;` (left-associative, equal precedence).
    Seq(Box<Script>, SeqOp, Box<Script>),
}

/// How two scripts are joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqOp {
    /// `a && b`: run `b` only if `a` succeeds.
    And,
    /// `a || b`: run `b` only if `a` fails.
    Or,
    /// `a ; b`: run both.
    Then,
}

/// One simple command of a pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Program name and arguments, unquoted.
    pub args: Vec<String>,
    /// Redirections, in the order written.
    pub redirects: Vec<Redirect>,
}

/// A redirection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redirect {
    /// `> f` or `>> f`.
    Stdout {
        /// The file, relative to the test's directory.
        path: String,
        /// `>>`: append rather than truncate.
        append: bool,
    },
    /// `2> f` or `2>> f`.
    Stderr {
        /// The file, relative to the test's directory.
        path: String,
        /// `2>>`: append rather than truncate.
        append: bool,
    },
    /// `2>&1`.
    StderrToStdout,
    /// `< f`.
    Stdin(String),
}
