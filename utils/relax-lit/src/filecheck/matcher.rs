//! Matching checks against the input, following FileCheck-19's `checkInput`, `Check`,
//! `CheckDag` and `CheckNot` step by step (with `-enable-var-scope` always on).
//!
//! * `CHECK-LABEL`s are matched first and cut the input into regions; every other check
//!   runs inside its region, and local variables (not starting with `$`) are forgotten at
//!   each region boundary.
//! * A check searches from the end of the previous match; `-NEXT`, `-SAME` and `-EMPTY`
//!   find the first match and then count the newlines skipped to reach it.
//! * `-DAG` groups match in any order without overlapping; `-NOT`s are checked in the text
//!   skipped between the surrounding positive matches.

use std::collections::HashMap;

use super::diag::Source;
use super::directives::Check;
use super::pattern::{Kind, Match, Pattern};

/// The state of one FileCheck run.
pub struct Matcher<'a> {
    chk: &'a Source<'a>,
    input: &'a Source<'a>,
    vars: HashMap<String, String>,
    /// Rendered diagnostics, FileCheck style.
    pub errors: String,
}

impl<'a> Matcher<'a> {
    /// A matcher of `input` against checks read from `chk`.
    pub fn new(chk: &'a Source<'a>, input: &'a Source<'a>) -> Self {
        Self { chk, input, vars: HashMap::new(), errors: String::new() }
    }

    /// FileCheck's `checkInput`: whether every check passes.
    pub fn run(&mut self, checks: &[Check]) -> bool {
        let len = self.input.text.len();
        let mut failed = false;
        let (mut i, mut j) = (0, 0);
        let mut buffer = 0;
        loop {
            let region = if j == checks.len() {
                (buffer, len)
            } else {
                if checks[j].pattern.kind != Kind::Label {
                    j += 1;
                    continue;
                }
                let Some((pos, n)) = self.check(&checks[j], (buffer, len), true) else {
                    return false;
                };
                let region = (buffer, pos + n);
                buffer = pos + n;
                j += 1;
                region
            };
            if i != 0 {
                self.vars.retain(|name, _| name.starts_with('$'));
            }
            let mut start = region.0;
            while i != j {
                match self.check(&checks[i], (start, region.1), false) {
                    Some((pos, n)) => start = pos + n,
                    None => {
                        failed = true;
                        i = j;
                        break;
                    }
                }
                i += 1;
            }
            if j == checks.len() {
                break;
            }
        }
        !failed
    }

    /// FileCheck's `FileCheckString::Check` over the region `(a, b)`; returns the match
    /// as an absolute offset and length.
    fn check(&mut self, c: &Check, (a, b): (usize, usize), label_scan: bool) -> Option<Match> {
        let mut nots = Vec::new();
        let last_pos = if label_scan { a } else { self.check_dag(c, (a, b), &mut nots)? };
        let pat = &c.pattern;
        let mut end = last_pos;
        let mut first = 0;
        for n in 1..=pat.count {
            let (pos, len) = self.search(pat, end, b)?;
            if n == 1 {
                first = end + pos;
            }
            end += pos + len;
        }
        if !label_scan && (!self.line_ok(pat, last_pos, first) || self.check_not((last_pos, first), &nots)) {
            return None;
        }
        Some((first, end - first))
    }

    /// FileCheck's `CheckDag`: matches the `-DAG` groups before `c`, checks the `-NOT`s
    /// between them, leaves trailing `-NOT`s in `nots`, and returns where `c` may start.
    fn check_dag<'c>(&mut self, c: &'c Check, (a, b): (usize, usize), nots: &mut Vec<&'c Pattern>) -> Option<usize> {
        let mut start = a;
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        for (idx, pat) in c.dag_nots.iter().enumerate() {
            if pat.kind == Kind::Not {
                nots.push(pat);
                continue;
            }
            let mut from = start;
            let mut mi = 0;
            loop {
                let (pos, len) = self.search(pat, from, b)?;
                let m = (from + pos, from + pos + len);
                let mut overlap = false;
                while mi < ranges.len() {
                    if m.0 < ranges[mi].1 {
                        overlap = ranges[mi].0 < m.1;
                        break;
                    }
                    mi += 1;
                }
                if !overlap {
                    ranges.insert(mi, m);
                    break;
                }
                from = ranges[mi].1;
                mi += 1;
            }
            let group_ends = c.dag_nots.get(idx + 1).is_none_or(|p| p.kind == Kind::Not);
            if group_ends {
                if !nots.is_empty() {
                    if self.check_not((start, ranges[0].0), nots) {
                        return None;
                    }
                    nots.clear();
                }
                start = ranges.last().map_or(start, |r| r.1);
                ranges.clear();
            }
        }
        Some(start)
    }

    /// FileCheck's `CheckNot`: whether any of `nots` matches in `(a, b)` (a failure).
    fn check_not(&mut self, (a, b): (usize, usize), nots: &[&Pattern]) -> bool {
        let mut failed = false;
        for pat in nots {
            match pat.find(&self.input.text[a..b], &mut self.vars) {
                Ok(None) => {}
                Ok(Some((pos, _))) => {
                    let desc = describe(pat);
                    self.error(pat, &format!("{desc}: excluded string found in input"));
                    self.note(a + pos, "found here");
                    failed = true;
                }
                Err(e) => {
                    self.error(pat, &e);
                    failed = true;
                }
            }
        }
        failed
    }

    /// `-NEXT`/`-EMPTY` need exactly one newline between the previous match (ending at
    /// `last`) and this one (at `first`); `-SAME` needs none.
    fn line_ok(&mut self, pat: &Pattern, last: usize, first: usize) -> bool {
        let newlines = count_newlines(&self.input.text[last..first]);
        let desc = describe(pat);
        let msg = match pat.kind {
            Kind::Next | Kind::Empty if newlines == 0 => {
                format!("{desc}: is on the same line as previous match")
            }
            Kind::Next | Kind::Empty if newlines != 1 => {
                format!("{desc}: is not on the line after the previous match")
            }
            Kind::Same if newlines != 0 => {
                format!("{desc}: is not on the same line as the previous match")
            }
            _ => return true,
        };
        self.error(pat, &msg);
        self.note(first, "'next' match was here");
        self.note(last, "previous match ended here");
        if newlines > 1 && pat.kind != Kind::Same {
            let after = self.input.text[last..].find('\n').map_or(first, |i| last + i + 1);
            self.note(after, "non-matching line after previous match is here");
        }
        false
    }

    /// Searches `pat` in `(from, to)`; reports a miss or an undefined variable.
    fn search(&mut self, pat: &Pattern, from: usize, to: usize) -> Option<Match> {
        match pat.find(&self.input.text[from..to], &mut self.vars) {
            Ok(Some(m)) => Some(m),
            Ok(None) => {
                self.error(pat, &format!("{}: expected string not found in input", describe(pat)));
                self.note(from, "scanning from here");
                for var in pat.uses() {
                    if let Some(value) = self.vars.get(var) {
                        let msg = format!("with \"{var}\" equal to \"{value}\"");
                        self.errors.push_str(&self.chk.render(pat.offset, "note", &msg));
                    }
                }
                None
            }
            Err(e) => {
                self.error(pat, &e);
                None
            }
        }
    }

    fn error(&mut self, pat: &Pattern, msg: &str) {
        if pat.offset == usize::MAX {
            let line = format!("error: {msg}\n-implicit-check-not='{}'\n", pat.text);
            self.errors.push_str(&line);
        } else {
            self.errors.push_str(&self.chk.render(pat.offset, "error", msg));
        }
    }

    fn note(&mut self, off: usize, msg: &str) {
        self.errors.push_str(&self.input.render(off, "note", msg));
    }
}

/// The directive's name as FileCheck prints it, such as `CHECK-NEXT`.
fn describe(pat: &Pattern) -> String {
    let suffix = if pat.count > 1 { "-COUNT" } else { pat.kind.suffix() };
    format!("{}{suffix}", pat.prefix)
}

/// FileCheck's `CountNumNewlinesBetween`: `\n`, `\r`, `\r\n` and `\n\r` each count once.
fn count_newlines(s: &str) -> usize {
    let b = s.as_bytes();
    let (mut i, mut n) = (0, 0);
    while i < b.len() {
        if b[i] == b'\n' || b[i] == b'\r' {
            n += 1;
            if i + 1 < b.len() && (b[i + 1] == b'\n' || b[i + 1] == b'\r') && b[i] != b[i + 1] {
                i += 1;
            }
        }
        i += 1;
    }
    n
}
