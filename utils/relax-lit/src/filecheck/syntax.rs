//! The syntax of a regex pattern: literal text, `{{re}}` blocks and `[[…]]` substitution
//! blocks, turned into [`Piece`]s as FileCheck's `parsePattern` does.

use super::pattern::ParseMode;
use super::posix;

/// A piece of a regex pattern.
#[derive(Debug, Clone)]
pub enum Piece {
    /// Rust regex text.
    Re(String),
    /// A use of a variable defined by an earlier pattern.
    Use(String),
}

/// The pieces, the variables defined as `(name, capture group)`, and whether any
/// variable or `@LINE` appears.
pub type Pieces = (Vec<Piece>, Vec<(String, String)>, bool);

/// The regex path of FileCheck's `parsePattern`.
pub fn parse_pieces(text: &str, full: bool, mode: ParseMode) -> Result<Pieces, (usize, String)> {
    let mut pieces = Vec::new();
    let mut defs: Vec<(String, String)> = Vec::new();
    let mut has_variable = false;
    let ws = if mode.strict { "" } else { " *" };
    if full {
        pieces.push(Piece::Re(format!("^{ws}")));
    }
    let mut pos = 0;
    while pos < text.len() {
        let rest = &text[pos..];
        if rest.starts_with("{{") {
            let Some(end) = rest.find("}}") else {
                return Err((pos, "found start of regex string with no end '}}'".into()));
            };
            let re = posix::translate(&rest[2..end]).map_err(|e| (pos, e))?;
            pieces.push(Piece::Re(format!("(?:{re})")));
            pos += end + 2;
            continue;
        }
        if rest.starts_with("[[") && !rest.starts_with("[[[") {
            let inner = &rest[2..];
            let Some(end) = var_block_end(inner) else {
                return Err((pos, "Invalid substitution block, no ]] found".into()));
            };
            has_variable = true;
            let piece = substitution(&inner[..end], &mut defs, mode).map_err(|e| (pos, e))?;
            pieces.push(piece);
            pos += 2 + end + 2;
            continue;
        }
        let next = [find_from(text, "{{", pos + 1), find_from(text, "[[", pos + 1)]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(text.len());
        pieces.push(Piece::Re(posix::escape(&text[pos..next])));
        pos = next;
    }
    if full {
        pieces.push(Piece::Re(format!("{ws}$")));
    }
    Ok((pieces, defs, has_variable))
}

/// Byte offset of `needle` in `text` at or after `from`.
fn find_from(text: &str, needle: &str, from: usize) -> Option<usize> {
    let b = text.as_bytes();
    let n = needle.as_bytes();
    (from..b.len().saturating_sub(n.len() - 1)).find(|&i| b[i..].starts_with(n))
}

/// FileCheck's `FindRegexVarEnd`: the `]]` that closes a substitution block, skipping
/// bracketed classes and escaped characters.
fn var_block_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let (mut i, mut depth) = (0, 0usize);
    while i < b.len() {
        if b[i..].starts_with(b"]]") && depth == 0 {
            return Some(i);
        }
        match b[i] {
            b'\\' => {
                i += 2;
                continue;
            }
            b'[' => depth += 1,
            b']' => depth = depth.checked_sub(1)?,
            _ => {}
        }
        i += 1;
    }
    None
}

/// Parses the inside of one `[[…]]` block into a regex piece.
fn substitution(block: &str, defs: &mut Vec<(String, String)>, mode: ParseMode) -> Result<Piece, String> {
    if let Some(expr) = block.strip_prefix('#') {
        return line_expr(expr.trim(), mode.line);
    }
    let colon = block.find(':');
    if block[..colon.unwrap_or(block.len())].contains([' ', '\t']) {
        return Err("unexpected whitespace".into());
    }
    let (name, pseudo, rest) = variable(block)?;
    if let Some(colon) = colon {
        if pseudo || colon != name.len() {
            return Err("invalid name in string variable definition".into());
        }
        let group = format!("v{}", defs.len());
        // `[[V:]]` is the valid empty group `()` to LLVM, unlike an empty `{{}}`.
        let re = if rest.len() == 1 { String::new() } else { posix::translate(&rest[1..])? };
        defs.push((name.to_string(), group.clone()));
        return Ok(Piece::Re(format!("(?P<{group}>{re})")));
    }
    if pseudo {
        return line_expr(block, mode.line);
    }
    if !rest.is_empty() {
        return Err("invalid name in string variable use".into());
    }
    if defs.iter().any(|(d, _)| d == name) {
        return Err(format!(
            "[[{name}]] on the line that defines it needs a back-reference, \
             which relax-lit does not support"
        ));
    }
    Ok(Piece::Use(name.to_string()))
}

/// FileCheck's `parseVariable`: an optional `$` (global) or `@` (pseudo) and an identifier.
fn variable(s: &str) -> Result<(&str, bool, &str), String> {
    let b = s.as_bytes();
    let pseudo = b.first() == Some(&b'@');
    let mut i = usize::from(pseudo || b.first() == Some(&b'$'));
    if i >= b.len() {
        return Err("empty variable name".into());
    }
    if !(b[i].is_ascii_alphabetic() || b[i] == b'_') {
        return Err("invalid variable name".into());
    }
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
        i += 1;
    }
    Ok((&s[..i], pseudo, &s[i..]))
}

/// `@LINE`, `@LINE+n`, `@LINE-n`: the only numeric expressions relax-lit supports.
fn line_expr(expr: &str, line: usize) -> Result<Piece, String> {
    let unsupported = || format!("numeric substitution `{expr}` is not supported by relax-lit (only @LINE±n)");
    let rest = expr.strip_prefix("@LINE").ok_or_else(unsupported)?.trim();
    let value = if rest.is_empty() {
        line as i64
    } else {
        let (sign, digits) = rest.split_at(1);
        let n: i64 = digits.trim().parse().map_err(|_| unsupported())?;
        match sign {
            "+" => line as i64 + n,
            "-" => line as i64 - n,
            _ => return Err(unsupported()),
        }
    };
    Ok(Piece::Re(posix::escape(&value.to_string())))
}
