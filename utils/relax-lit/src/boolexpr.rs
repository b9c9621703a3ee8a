//! lit's boolean feature expressions: `a && !(b || c)`, as in `REQUIRES:` and `%if`.
//!
//! Unlike lit, an unknown feature name is an error rather than false, so a typo cannot
//! silently turn a test off. `true` and `false` are constants.

use crate::features::Features;

/// Evaluates `expr` against `features`.
pub fn evaluate(expr: &str, features: &Features) -> Result<bool, String> {
    let tokens = tokenize(expr)?;
    let mut p = Parser { tokens, pos: 0, features };
    let value = p.or()?;
    match p.tokens.get(p.pos) {
        None => Ok(value),
        Some(t) => Err(format!("unexpected `{t}` in expression `{expr}`")),
    }
}

fn tokenize(expr: &str) -> Result<Vec<String>, String> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || "-+=._".contains(c);
    let mut tokens = Vec::new();
    let mut rest = expr.trim_start();
    while !rest.is_empty() {
        let len = if rest.starts_with("&&") || rest.starts_with("||") {
            2
        } else if rest.starts_with(['(', ')', '!']) {
            1
        } else if rest.starts_with("{{") {
            return Err(format!("regex features are not supported: `{expr}`"));
        } else {
            let n = rest.find(|c| !is_ident(c)).unwrap_or(rest.len());
            if n == 0 {
                return Err(format!("cannot parse `{rest}` in expression `{expr}`"));
            }
            n
        };
        tokens.push(rest[..len].to_string());
        rest = rest[len..].trim_start();
    }
    if tokens.is_empty() {
        return Err("empty feature expression".into());
    }
    Ok(tokens)
}

struct Parser<'a> {
    tokens: Vec<String>,
    pos: usize,
    features: &'a Features,
}

impl Parser<'_> {
    fn accept(&mut self, t: &str) -> bool {
        let hit = self.tokens.get(self.pos).is_some_and(|x| x == t);
        self.pos += usize::from(hit);
        hit
    }

    fn or(&mut self) -> Result<bool, String> {
        let mut v = self.and()?;
        while self.accept("||") {
            v |= self.and()?;
        }
        Ok(v)
    }

    fn and(&mut self) -> Result<bool, String> {
        let mut v = self.not()?;
        while self.accept("&&") {
            v &= self.not()?;
        }
        Ok(v)
    }

    fn not(&mut self) -> Result<bool, String> {
        if self.accept("!") {
            return Ok(!self.not()?);
        }
        if self.accept("(") {
            let v = self.or()?;
            return if self.accept(")") { Ok(v) } else { Err("expected `)`".into()) };
        }
        let Some(t) = self.tokens.get(self.pos).cloned() else {
            return Err("expression ends too early".into());
        };
        self.pos += 1;
        match t.as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            "&&" | "||" | ")" => Err(format!("unexpected `{t}`")),
            name => self
                .features
                .get(name)
                .ok_or_else(|| format!("unknown feature `{name}` (known: {})", Features::NAMES.join(", "))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions() {
        let f = Features { llvm: true, ..Features::default() };
        assert_eq!(evaluate("llvm", &f), Ok(true));
        assert_eq!(evaluate("llvm && !spirv", &f), Ok(true));
        assert_eq!(evaluate("spirv || (ptxas && llvm)", &f), Ok(false));
        assert!(evaluate("llvmm", &f).is_err());
        assert!(evaluate("llvm &&", &f).is_err());
        assert!(evaluate("", &f).is_err());
    }
}
