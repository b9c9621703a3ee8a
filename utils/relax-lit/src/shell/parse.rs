//! Tokenising and parsing a RUN command with sh quoting rules.

use super::{Command, Redirect, Script, SeqOp};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Word(String),
    Pipe,
    Seq(SeqOp),
    /// A redirection operator: `>`, `>>`, `<`, `2>`, `2>>`, `2>&1`.
    Redir(&'static str),
}

/// Parses a RUN command; `None` for an empty command (lit runs nothing for it).
pub fn parse(line: &str) -> Result<Option<Script>, String> {
    let toks = lex(line)?;
    if toks.is_empty() {
        return Ok(None);
    }
    let mut parts = toks.split_inclusive(|t| matches!(t, Tok::Seq(_)));
    let mut script: Option<Script> = None;
    let mut pending: Option<SeqOp> = None;
    for part in parts.by_ref() {
        let (body, op) = match part.split_last() {
            Some((Tok::Seq(op), body)) => (body, Some(*op)),
            _ => (part, None),
        };
        let pipeline = Script::Pipeline(pipeline(body)?);
        script = Some(match (script, pending) {
            (Some(left), Some(op)) => Script::Seq(Box::new(left), op, Box::new(pipeline)),
            _ => pipeline,
        });
        pending = op;
    }
    if pending.is_some() {
        return Err("the command ends with `&&`, `||` or `;`".into());
    }
    Ok(script)
}

fn pipeline(toks: &[Tok]) -> Result<Vec<Command>, String> {
    toks.split(|t| *t == Tok::Pipe).map(command).collect()
}

fn command(toks: &[Tok]) -> Result<Command, String> {
    let mut cmd = Command { args: Vec::new(), redirects: Vec::new() };
    let mut it = toks.iter();
    while let Some(t) = it.next() {
        match t {
            Tok::Word(w) => cmd.args.push(w.clone()),
            Tok::Redir("2>&1") => cmd.redirects.push(Redirect::StderrToStdout),
            Tok::Redir(op) => {
                let Some(Tok::Word(path)) = it.next() else {
                    return Err(format!("`{op}` needs a file name"));
                };
                let path = path.clone();
                cmd.redirects.push(match *op {
                    ">" => Redirect::Stdout { path, append: false },
                    ">>" => Redirect::Stdout { path, append: true },
                    "2>" => Redirect::Stderr { path, append: false },
                    "2>>" => Redirect::Stderr { path, append: true },
                    _ => Redirect::Stdin(path),
                });
            }
            Tok::Pipe | Tok::Seq(_) => unreachable!("split out by the caller"),
        }
    }
    if cmd.args.is_empty() {
        return Err("empty command in a pipeline".into());
    }
    Ok(cmd)
}

/// Splits `line` into words and operators.
fn lex(line: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = line.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let at = |s: &str| chars[i..].iter().collect::<String>().starts_with(s);
        let (tok, len) = match c {
            ' ' | '\t' => {
                i += 1;
                continue;
            }
            '|' if at("||") => (Tok::Seq(SeqOp::Or), 2),
            '|' => (Tok::Pipe, 1),
            '&' if at("&&") => (Tok::Seq(SeqOp::And), 2),
            ';' => (Tok::Seq(SeqOp::Then), 1),
            '>' if at(">>") => (Tok::Redir(">>"), 2),
            '>' => (Tok::Redir(">"), 1),
            '<' => (Tok::Redir("<"), 1),
            '2' if at("2>&1") && ends_word(&chars, i + 4) => (Tok::Redir("2>&1"), 4),
            '2' if at("2>>") => (Tok::Redir("2>>"), 3),
            '2' if at("2>") => (Tok::Redir("2>"), 2),
            '#' => return Err("`#` comments are not supported in RUN lines".into()),
            _ => {
                let (word, end) = word(&chars, i)?;
                toks.push(Tok::Word(word));
                i = end;
                continue;
            }
        };
        toks.push(tok);
        i += len;
    }
    Ok(toks)
}

fn ends_word(chars: &[char], i: usize) -> bool {
    chars.get(i).is_none_or(|c| " \t|;&<>".contains(*c))
}

/// Reads one word starting at `i`; returns it unquoted and the index after it.
fn word(chars: &[char], mut i: usize) -> Result<(String, usize), String> {
    let mut out = String::new();
    while let Some(&c) = chars.get(i) {
        match c {
            ' ' | '\t' | '|' | ';' | '<' | '>' => break,
            '&' if chars.get(i + 1) == Some(&'&') => break,
            '\'' => {
                let end = chars[i + 1..].iter().position(|&c| c == '\'').ok_or("unterminated single quote")?;
                out.extend(&chars[i + 1..i + 1 + end]);
                i += end + 2;
            }
            '"' => {
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err("unterminated double quote".into()),
                        Some('"') => break,
                        Some('\\') if chars.get(i + 1).is_some_and(|n| "\\\"$`".contains(*n)) => {
                            out.push(chars[i + 1]);
                            i += 2;
                        }
                        Some('$' | '`') => {
                            return Err("`$` and backquotes are not supported in RUN lines".into());
                        }
                        Some(&c) => {
                            out.push(c);
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            '\\' => {
                let next = chars.get(i + 1).ok_or("a RUN line cannot end with `\\`")?;
                out.push(*next);
                i += 2;
            }
            '$' | '`' | '(' | ')' | '*' | '?' | '&' => {
                return Err(format!("unquoted `{c}` is not supported in RUN lines"));
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok((out, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &Script) -> Vec<Vec<String>> {
        match s {
            Script::Pipeline(cmds) => cmds.iter().map(|c| c.args.clone()).collect(),
            Script::Seq(..) => panic!("not a pipeline"),
        }
    }

    #[test]
    fn words_and_quotes() {
        let s = parse(r#"relax-opt --pass-pipeline='a,b' "x y" a\ b | FileCheck %s"#).unwrap().unwrap();
        assert_eq!(args(&s), [vec!["relax-opt", "--pass-pipeline=a,b", "x y", "a b"], vec!["FileCheck", "%s"]]);
    }

    #[test]
    fn sequences_and_redirects() {
        let s = parse("a > f 2>&1 && b < g ; c 2> e").unwrap().unwrap();
        let Script::Seq(left, SeqOp::Then, right) = s else { panic!("{s:?}") };
        let Script::Seq(a, SeqOp::And, _) = *left else { panic!() };
        let Script::Pipeline(a) = *a else { panic!() };
        assert_eq!(a[0].redirects, [Redirect::Stdout { path: "f".into(), append: false }, Redirect::StderrToStdout]);
        let Script::Pipeline(c) = *right else { panic!() };
        assert_eq!(c[0].redirects, [Redirect::Stderr { path: "e".into(), append: false }]);
        assert_eq!(parse("  ").unwrap(), None);
    }

    #[test]
    fn rejects_shell_features() {
        for bad in ["echo $HOME", "ls *.rlx", "a &", "(a)", "a |", "a &&", "'open", "a `b`", "a >"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
