//! lit's substitutions on a RUN line: `%%`, `%if feature %{…%} %else %{…%}`, then `%s`,
//! `%S`, `%p`, `%t` and `%cuda-sim` (the PTX simulator library). Any other `%` sequence
//! is an error.

use crate::boolexpr;
use crate::features::Features;

/// The values of the path substitutions for one test.
#[derive(Debug, Clone)]
pub struct Paths {
    /// `%s`: the test file.
    pub source: String,
    /// `%S` and `%p`: the test file's directory.
    pub source_dir: String,
    /// `%t`: a temporary path unique to the test.
    pub temp: String,
}

/// Stands for `%%` while the other substitutions run.
const MARKER: char = '\u{0}';

/// Applies lit's substitutions to `command`, then trims it.
pub fn expand(command: &str, paths: &Paths, features: &Features) -> Result<String, String> {
    let escaped = command.replace("%%", &MARKER.to_string());
    let conditional = if escaped.contains("%if ") {
        let (text, rest) = branches(&escaped, false, features)?;
        debug_assert!(rest.is_empty());
        text
    } else {
        escaped
    };
    let mut out = String::with_capacity(conditional.len());
    let mut chars = conditional.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if let Some(rest) = chars.as_str().strip_prefix("cuda-sim") {
            let lib = features.cuda_sim.ok_or("`%cuda-sim`: the PTX simulator is not built (guard with `cuda-sim`)")?;
            out.push_str(&lib.to_string_lossy());
            chars = rest.chars();
            continue;
        }
        match chars.next() {
            Some('s') => out.push_str(&paths.source),
            Some('S' | 'p') => out.push_str(&paths.source_dir),
            Some('t') => out.push_str(&paths.temp),
            Some(other) => return Err(format!("unsupported substitution `%{other}`")),
            None => return Err("a lone `%` ends the command (write `%%`)".into()),
        }
    }
    Ok(out.replace(MARKER, "%").trim().to_string())
}

/// lit's `parseRecursive`: expands `%if` blocks in `ln`, stopping at `%}` when `nested`.
fn branches<'a>(mut ln: &'a str, nested: bool, features: &Features) -> Result<(String, &'a str), String> {
    let mut result = String::new();
    while !ln.is_empty() {
        if nested && ln.starts_with("%}") {
            break;
        }
        if let Some(rest) = ln.strip_prefix("%if ") {
            let open = rest.find("%{").ok_or("'%{' is missing for %if substitution")?;
            let cond = &rest[..open];
            let (then, rest) = branches(&rest[open + 2..], true, features)?;
            ln = rest.strip_prefix("%}").ok_or("'%}' is missing for %if substitution")?;
            let mut otherwise = String::new();
            let trimmed = ln.trim_start();
            if let Some(after) = trimmed.strip_prefix("%else") {
                let after = after.trim_start();
                let body = after.strip_prefix("%{").ok_or("'%{' is missing for %else substitution")?;
                let (text, rest) = branches(body, true, features)?;
                otherwise = text;
                ln = rest.strip_prefix("%}").ok_or("'%}' is missing for %else substitution")?;
            }
            let holds = boolexpr::evaluate(cond, features)?;
            result.push_str(if holds { &then } else { &otherwise });
            continue;
        }
        // Plain text up to the next `%if` (or `%}` when nested).
        let stop = [ln.find("%if"), if nested { ln.find("%}") } else { None }]
            .into_iter()
            .flatten()
            .filter(|&i| i > 0)
            .min()
            .unwrap_or(ln.len());
        result.push_str(&ln[..stop]);
        ln = &ln[stop..];
    }
    Ok((result, ln))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> Paths {
        Paths { source: "/t/a.rlx".into(), source_dir: "/t".into(), temp: "/tmp/a.tmp".into() }
    }

    #[test]
    fn paths_and_percent() {
        let f = Features::default();
        assert_eq!(
            expand(" cat %s > %t; ls %S %p 100%%", &paths(), &f).unwrap(),
            "cat /t/a.rlx > /tmp/a.tmp; ls /t /t 100%"
        );
        assert!(expand("x %q", &paths(), &f).is_err());
    }

    #[test]
    fn conditionals() {
        let f = Features { llvm: true, ..Features::default() };
        let e = |s| expand(s, &paths(), &f);
        assert_eq!(e("a %if llvm %{ b %s %} c").unwrap(), "a  b /t/a.rlx  c");
        assert_eq!(e("%if spirv %{ x %} %else %{ y %}").unwrap(), "y");
        assert_eq!(e("%if spirv %{ x %}").unwrap(), "");
        assert_eq!(e("%if llvm %{ %if spirv %{ a %} %else %{ b %} %}").unwrap(), "b");
        assert!(e("%if bogus %{ x %}").is_err());
        assert!(e("%if llvm %{ x").is_err());
    }

    #[test]
    fn the_simulator_library() {
        let lib = std::path::Path::new("/b/librelax_cuda_sim.so");
        let f = Features { cuda_sim: Some(lib), ..Features::default() };
        assert_eq!(
            expand("run --cuda-driver %cuda-sim %s", &paths(), &f).unwrap(),
            "run --cuda-driver /b/librelax_cuda_sim.so /t/a.rlx"
        );
        assert_eq!(expand("%if cuda-sim %{ a %cuda-sim %}", &paths(), &f).unwrap(), "a /b/librelax_cuda_sim.so");
        let none = Features::default();
        assert_eq!(expand("%if cuda-sim %{ a %cuda-sim %}", &paths(), &none).unwrap(), "");
        assert!(expand("a %cuda-sim", &paths(), &none).is_err());
    }
}
