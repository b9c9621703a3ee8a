//! FileCheck's command line, as LLVM's option parser reads it (`-opt`, `--opt`, `--opt=v`,
//! `--opt v`), restricted to the options relax tests use.

/// The options of one FileCheck invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The check file (positional argument).
    pub check_file: String,
    /// `--input-file`: read the input from this file instead of stdin (`-` is stdin).
    pub input_file: Option<String>,
    /// `--check-prefix` / `--check-prefixes`, in order; `CHECK` when none is given.
    pub prefixes: Vec<String>,
    /// Whether `prefixes` is the default `CHECK`.
    pub default_prefix: bool,
    /// `--comment-prefixes`, default `COM,RUN`.
    pub comment_prefixes: Vec<String>,
    /// `--implicit-check-not` patterns.
    pub implicit_check_not: Vec<String>,
    /// `--match-full-lines`.
    pub match_full_lines: bool,
    /// `--strict-whitespace`.
    pub strict_whitespace: bool,
    /// `--allow-empty`: an empty input is not an error.
    pub allow_empty: bool,
    /// `--allow-unused-prefixes`.
    pub allow_unused_prefixes: bool,
}

/// Options that take a value.
const VALUED: &[&str] = &[
    "check-prefix",
    "check-prefixes",
    "comment-prefixes",
    "implicit-check-not",
    "input-file",
    "dump-input",
    "dump-input-filter",
    "dump-input-context",
];

/// Boolean options; `enable-var-scope` is always on in relax-lit and in `test/lit.cfg.py`.
const FLAGS: &[&str] = &[
    "match-full-lines",
    "strict-whitespace",
    "allow-empty",
    "allow-unused-prefixes",
    "enable-var-scope",
    "color",
    "v",
    "vv",
];

/// Parses FileCheck's arguments (without the program name).
pub fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        check_file: String::new(),
        input_file: None,
        prefixes: Vec::new(),
        default_prefix: false,
        comment_prefixes: vec!["COM".into(), "RUN".into()],
        implicit_check_not: Vec::new(),
        match_full_lines: false,
        strict_whitespace: false,
        allow_empty: false,
        allow_unused_prefixes: false,
    };
    let mut positional = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let Some(opt) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) else {
            positional.push(arg.clone());
            continue;
        };
        if opt.is_empty() {
            positional.push(arg.clone());
            continue;
        }
        let (name, inline) = match opt.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (opt, None),
        };
        if VALUED.contains(&name) {
            let value = match inline {
                Some(v) => v,
                None => it.next().cloned().ok_or(format!("option `{arg}` needs a value"))?,
            };
            apply_valued(&mut o, name, value);
        } else if FLAGS.contains(&name) {
            let on = match inline.as_deref() {
                None | Some("true" | "1") => true,
                Some("false" | "0") => false,
                Some(v) => return Err(format!("bad value `{v}` for option `{name}`")),
            };
            apply_flag(&mut o, name, on);
        } else {
            return Err(format!("unsupported FileCheck option `{arg}`"));
        }
    }
    match positional.as_slice() {
        [file] => o.check_file = file.clone(),
        [] => return Err("FileCheck needs a check file".into()),
        _ => return Err(format!("too many positional arguments: {}", positional.join(" "))),
    }
    if o.prefixes.is_empty() {
        o.prefixes.push("CHECK".into());
        o.default_prefix = true;
    }
    validate_prefixes(&o)?;
    Ok(o)
}

fn apply_valued(o: &mut Options, name: &str, value: String) {
    let list = |v: &str| v.split(',').map(str::to_string).collect::<Vec<_>>();
    match name {
        "check-prefix" => o.prefixes.push(value),
        "check-prefixes" => o.prefixes.extend(list(&value)),
        "comment-prefixes" => o.comment_prefixes = list(&value),
        "implicit-check-not" => o.implicit_check_not.push(value),
        "input-file" => o.input_file = Some(value),
        _ => {} // --dump-input and friends only shape FileCheck's failure report.
    }
}

fn apply_flag(o: &mut Options, name: &str, on: bool) {
    match name {
        "match-full-lines" => o.match_full_lines = on,
        "strict-whitespace" => o.strict_whitespace = on,
        "allow-empty" => o.allow_empty = on,
        "allow-unused-prefixes" => o.allow_unused_prefixes = on,
        _ => {}
    }
}

/// FileCheck's rules: a prefix starts with a letter, holds only `[A-Za-z0-9_-]`, and no
/// prefix (check or comment) appears twice.
fn validate_prefixes(o: &Options) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for p in o.prefixes.iter().chain(&o.comment_prefixes) {
        let ok = p.starts_with(|c: char| c.is_ascii_alphabetic())
            && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !ok {
            return Err(format!(
                "supplied prefix `{p}` must start with a letter and contain only \
                 alphanumeric characters, hyphens, and underscores"
            ));
        }
        if !seen.insert(p.as_str()) {
            return Err(format!("supplied prefix `{p}` must be unique"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn forms() {
        let o = parse(&args("f.rlx --check-prefixes=A,B -check-prefix C --match-full-lines")).unwrap();
        assert_eq!(o.check_file, "f.rlx");
        assert_eq!(o.prefixes, ["A", "B", "C"]);
        assert!(o.match_full_lines && !o.default_prefix);
        let o = parse(&args("--input-file x f --dump-input=fail")).unwrap();
        assert_eq!(o.input_file.as_deref(), Some("x"));
        assert_eq!(o.prefixes, ["CHECK"]);
    }

    #[test]
    fn errors() {
        assert!(parse(&args("f --bogus")).is_err());
        assert!(parse(&args("f g")).is_err());
        assert!(parse(&args("f --check-prefix=1A")).is_err());
        assert!(parse(&args("f --check-prefixes=A,A")).is_err());
        assert!(parse(&args("f --check-prefix=RUN")).is_err());
    }
}
