//! Reading a test's lit directives, the way lit 19 finds them.
//!
//! lit looks for `RUN:`, `REQUIRES:`, `UNSUPPORTED:`, … anywhere in a line (not only in
//! comments) and takes the rest of the line. A RUN line ending in `\` continues on the next
//! `RUN:` line; the `\` is dropped and the texts are joined. `END.` on its own stops the
//! scan. lit's other keywords (`XFAIL:`, `DEFINE:`, …) are errors here.

/// One command, possibly joined from several `RUN:` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunLine {
    /// Line of its first `RUN:` (1-based).
    pub line: usize,
    /// Line of its last `RUN:`.
    pub end_line: usize,
    /// The command text, before substitutions.
    pub command: String,
}

/// The directives of one test file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    /// The RUN commands, in order.
    pub runs: Vec<RunLine>,
    /// `REQUIRES:` expressions with their lines; all must hold.
    pub requires: Vec<(usize, String)>,
    /// `UNSUPPORTED:` expressions with their lines; none may hold.
    pub unsupported: Vec<(usize, String)>,
}

/// A malformed directive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    /// The line it is on.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

const KEYWORDS: [&str; 8] =
    ["RUN:", "XFAIL:", "REQUIRES:", "UNSUPPORTED:", "ALLOW_RETRIES:", "END.", "DEFINE:", "REDEFINE:"];

/// Extracts the lit directives of `text`.
pub fn parse_script(text: &str) -> Result<Script, ScriptError> {
    let mut script = Script::default();
    for (idx, raw) in text.split('\n').enumerate() {
        let line = idx + 1;
        let Some((pos, kw)) = KEYWORDS.iter().filter_map(|k| raw.find(k).map(|p| (p, *k))).min_by_key(|&(p, _)| p)
        else {
            continue;
        };
        let rest = raw[pos + kw.len()..].trim_end_matches('\r');
        let err = |message: String| ScriptError { line, message };
        match kw {
            "RUN:" => add_run(&mut script.runs, line, rest),
            "REQUIRES:" | "UNSUPPORTED:" => {
                if rest.trim_end().ends_with('\\') {
                    return Err(err(format!("`{kw}` lines cannot be continued")));
                }
                let list = if kw == "REQUIRES:" { &mut script.requires } else { &mut script.unsupported };
                list.extend(rest.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| (line, s.to_string())));
            }
            "END." if rest.trim().is_empty() => break,
            "END." => {}
            _ => return Err(err(format!("lit's `{kw}` is not supported by relax-lit"))),
        }
    }
    if let Some(r) = script.runs.iter().find(|r| r.command.ends_with('\\')) {
        return Err(ScriptError {
            line: r.end_line,
            message: "unterminated RUN line (it ends with `\\` but no RUN: line follows)".into(),
        });
    }
    Ok(script)
}

/// lit's `CommandDirective`: trailing whitespace is stripped, `\` joins the next RUN line.
fn add_run(runs: &mut Vec<RunLine>, line: usize, rest: &str) {
    let text = rest.trim_end();
    if let Some(last) = runs.last_mut()
        && let Some(head) = last.command.strip_suffix('\\')
    {
        last.command = format!("{head}{text}");
        last.end_line = line;
        return;
    }
    runs.push(RunLine { line, end_line: line, command: text.to_string() });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_and_continuations() {
        let s = parse_script("# RUN: a \\\n# RUN:   b | c\nx\n# RUN: d\n").unwrap();
        assert_eq!(s.runs.len(), 2);
        assert_eq!(s.runs[0].command, " a    b | c");
        assert_eq!((s.runs[0].line, s.runs[0].end_line), (1, 2));
        assert_eq!(s.runs[1].command, " d");
    }

    #[test]
    fn features_and_errors() {
        let s = parse_script("# REQUIRES: llvm, spirv-val\n# UNSUPPORTED: ptxas\n").unwrap();
        assert_eq!(s.requires, [(1, "llvm".into()), (1, "spirv-val".into())]);
        assert_eq!(s.unsupported, [(2, "ptxas".into())]);
        assert!(parse_script("# XFAIL: *\n").is_err());
        assert!(parse_script("# RUN: a \\\n").is_err());
        let s = parse_script("# RUN: a\n# END.\n# RUN: b\n").unwrap();
        assert_eq!(s.runs.len(), 1);
    }
}
