//! POSIX extended regular expressions, read the way FileCheck-19 reads `{{…}}` blocks.
//!
//! FileCheck compiles its patterns with LLVM's `Regex` (a BSD `regcomp`): POSIX ERE syntax,
//! newline-sensitive (`.` and `[^…]` never match `\n`, `^`/`$` match at line ends) and
//! **leftmost-longest** matching. [`translate`] rewrites one ERE into Rust syntax and
//! [`PosixRegex`] finds the leftmost-longest match with regex-automata, so `{{a|ab}}` takes
//! `ab` here exactly as it does in FileCheck.
//!
//! Escapes that FileCheck reads differently from Rust (`\d`, `\s`, `\t`, … are plain letters
//! to LLVM) and back-references are rejected with a message rather than silently disagreeing.

use regex_automata::util::captures::Captures;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind, meta};

/// Characters that must be escaped to be literal in Rust regex syntax (outside a class).
const META: &str = r"\.+*?()|[]{}^$#&-~";

/// Escapes `text` so that Rust regex syntax reads it literally.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if META.contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Translates one POSIX ERE, as LLVM's `Regex` reads it, into Rust regex syntax.
///
/// LLVM rejects what Rust would accept in a few places, and so does this: an empty regex
/// or alternative (`a|`), and a repetition with nothing to repeat (`*a`, `a**`, `a*?`).
pub fn translate(ere: &str) -> Result<String, String> {
    let chars: Vec<char> = ere.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    // Whether the last item can take a repetition operator.
    let mut operand = false;
    // Per open group (the outermost is the whole regex): is the current branch empty, and
    // has the group seen a `|`?
    let mut groups = vec![(true, false)];
    let empty = || Err::<String, String>("invalid regex: empty (sub)expression".into());
    while i < chars.len() {
        let c = chars[i];
        let repeat = matches!(c, '*' | '+' | '?') || (c == '{' && bound(&chars, i).is_some());
        if repeat && !operand {
            return Err("invalid regex: repetition-operator operand invalid".into());
        }
        let top = groups.len() - 1;
        match c {
            '|' => {
                if groups[top].0 {
                    return empty();
                }
                groups[top] = (true, true);
                out.push('|');
                operand = false;
                i += 1;
                continue;
            }
            '(' if chars.get(i + 1) == Some(&'?') => {
                return Err("`(?` is not POSIX regex syntax".into());
            }
            '(' => {
                groups[top].0 = false;
                groups.push((true, false));
                out.push('(');
                operand = false;
                i += 1;
                continue;
            }
            ')' if groups.len() > 1 => {
                let (branch_empty, alternation) = groups.pop().unwrap_or_default();
                if branch_empty && alternation {
                    return empty();
                }
                out.push(')');
                operand = true;
                i += 1;
                continue;
            }
            _ => {}
        }
        groups[top].0 = false;
        operand = !repeat && !matches!(c, '^' | '$');
        match c {
            '\\' => {
                let Some(&next) = chars.get(i + 1) else {
                    return Err("trailing backslash in regex".into());
                };
                if next.is_ascii_digit() {
                    return Err(format!("back-reference `\\{next}` is not supported by relax-lit"));
                }
                if next.is_ascii_alphabetic() {
                    return Err(format!(
                        "`\\{next}` means a plain `{next}` to FileCheck-19; \
                         write a bracket expression such as [0-9] or [[:space:]]"
                    ));
                }
                out.push_str(&escape(&next.to_string()));
                i += 2;
            }
            '[' => i = bracket(&chars, i, &mut out)?,
            '{' => match bound(&chars, i) {
                Some(end) => {
                    out.extend(&chars[i..end]);
                    i = end;
                }
                None => {
                    out.push_str(r"\{");
                    i += 1;
                }
            },
            '}' | ')' | '#' | '&' | '~' | '-' => {
                out.push('\\');
                out.push(c);
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    match groups.as_slice() {
        [(true, _)] => empty(),
        [_] => Ok(out),
        _ => Err("invalid regex: parentheses not balanced".into()),
    }
}

/// Recognises a repetition bound `{m}`, `{m,}` or `{m,n}` at `i`; returns the index after it.
fn bound(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i + 1;
    let digits = |j: &mut usize| {
        let start = *j;
        while chars.get(*j).is_some_and(char::is_ascii_digit) {
            *j += 1;
        }
        *j > start
    };
    if !digits(&mut j) {
        return None;
    }
    if chars.get(j) == Some(&',') {
        j += 1;
        digits(&mut j);
    }
    (chars.get(j) == Some(&'}')).then_some(j + 1)
}

/// Translates the bracket expression starting at `chars[start] == '['`; returns the index
/// after its closing `]`. Backslash is literal inside POSIX brackets, `]` first is literal,
/// and a negated class never matches a newline.
fn bracket(chars: &[char], start: usize, out: &mut String) -> Result<usize, String> {
    let mut i = start + 1;
    let negated = chars.get(i) == Some(&'^');
    if negated {
        i += 1;
    }
    let mut items = String::new();
    let mut first = true;
    loop {
        let Some(&c) = chars.get(i) else {
            return Err("unterminated bracket expression".into());
        };
        if c == ']' && !first {
            i += 1;
            break;
        }
        first = false;
        if c == '[' && matches!(chars.get(i + 1), Some(':' | '=' | '.')) {
            let kind = chars[i + 1];
            let rest: String = chars[i + 2..].iter().collect();
            let Some(len) = rest.find(&format!("{kind}]")) else {
                return Err("unterminated `[:` in bracket expression".into());
            };
            if kind != ':' {
                return Err(format!("`[{kind}` in a bracket expression is not supported"));
            }
            items.push_str(&format!("[:{}:]", &rest[..len]));
            i += 2 + rest[..len].chars().count() + 2;
            continue;
        }
        let is_range = chars.get(i + 1) == Some(&'-') && chars.get(i + 2).is_some_and(|&e| e != ']');
        class_char(c, &mut items);
        if is_range {
            items.push('-');
            class_char(chars[i + 2], &mut items);
            i += 3;
        } else {
            i += 1;
        }
    }
    out.push('[');
    if negated {
        out.push('^');
    }
    out.push_str(&items);
    if negated {
        out.push_str(r"\n");
    }
    out.push(']');
    Ok(i)
}

/// Appends one literal character of a class, escaped for Rust.
fn class_char(c: char, items: &mut String) {
    if r"\[]^-&~".contains(c) {
        items.push('\\');
    }
    items.push(c);
}

/// A compiled pattern that reports leftmost-longest matches, as POSIX `regexec` does.
pub struct PosixRegex {
    /// Finds where the leftmost match starts.
    first: meta::Regex,
    /// Anchored at that start, finds the longest match.
    longest: meta::Regex,
    /// `(?:re)\z`, used to read capture groups of a match of known extent.
    tail: Option<meta::Regex>,
    /// Capture group names to report.
    groups: Vec<String>,
}

/// One match: byte range in the haystack and the text of each named group.
pub struct Found {
    /// Start of the match.
    pub start: usize,
    /// End of the match.
    pub end: usize,
    /// `(group name, matched text)` for each requested group.
    pub groups: Vec<(String, String)>,
}

fn build(pattern: &str, kind: MatchKind) -> Result<meta::Regex, String> {
    meta::Regex::builder()
        .syntax(syntax::Config::new().multi_line(true))
        .configure(meta::Config::new().match_kind(kind))
        .build(pattern)
        .map_err(|e| format!("invalid regex: {e}"))
}

impl PosixRegex {
    /// Compiles a Rust-syntax pattern; `groups` are the named groups whose text
    /// [`PosixRegex::find`] reports.
    pub fn new(pattern: &str, groups: Vec<String>) -> Result<Self, String> {
        let tail =
            if groups.is_empty() { None } else { Some(build(&format!(r"(?:{pattern})\z"), MatchKind::LeftmostFirst)?) };
        Ok(Self {
            first: build(pattern, MatchKind::LeftmostFirst)?,
            longest: build(pattern, MatchKind::All)?,
            tail,
            groups,
        })
    }

    /// The leftmost-longest match in `hay`, if any.
    pub fn find(&self, hay: &str) -> Option<Found> {
        let start = self.first.find(hay)?.start();
        let anchored = Input::new(hay).range(start..).anchored(Anchored::Yes);
        let end = self.longest.search(&anchored)?.end();
        let mut groups = Vec::new();
        if let Some(tail) = &self.tail {
            let mut caps = tail.create_captures();
            let input = Input::new(&hay[..end]).range(start..).anchored(Anchored::Yes);
            tail.search_captures(&input, &mut caps);
            if !caps.is_match() {
                caps = self.first.create_captures();
                self.first.search_captures(&anchored, &mut caps);
            }
            groups = self.read_groups(hay, &caps);
        }
        Some(Found { start, end, groups })
    }

    fn read_groups(&self, hay: &str, caps: &Captures) -> Vec<(String, String)> {
        self.groups
            .iter()
            .map(|name| {
                let text = caps.get_group_by_name(name).map_or("", |span| &hay[span.range()]);
                (name.clone(), text.to_string())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(ere: &str, hay: &str) -> Option<String> {
        let re = PosixRegex::new(&translate(ere).unwrap(), Vec::new()).unwrap();
        re.find(hay).map(|f| hay[f.start..f.end].to_string())
    }

    #[test]
    fn leftmost_longest() {
        assert_eq!(matches("a|ab", "xab").as_deref(), Some("ab"));
        assert_eq!(matches("(a|ab)(c|bcd)", "abcd").as_deref(), Some("abcd"));
    }

    #[test]
    fn newline_sensitive() {
        assert_eq!(matches("a[^x]*", "ab\ncd").as_deref(), Some("ab"));
        assert_eq!(matches("a.*", "ab\ncd").as_deref(), Some("ab"));
    }

    #[test]
    fn posix_brackets_and_braces() {
        assert_eq!(matches(r"a[\]b", r"a\b").as_deref(), Some(r"a\b"));
        assert_eq!(matches("a{b", "a{b").as_deref(), Some("a{b"));
        assert_eq!(matches("a{2}", "aaa").as_deref(), Some("aa"));
        assert_eq!(matches("[]x]+", "]x]").as_deref(), Some("]x]"));
        assert_eq!(matches("[[:digit:]]+", "ab12").as_deref(), Some("12"));
        assert_eq!(matches("x-y", "x-y").as_deref(), Some("x-y"));
    }

    #[test]
    fn rejects_non_posix_escapes() {
        assert!(translate(r"\d+").is_err());
        assert!(translate(r"(a)\1").is_err());
        assert!(translate(r"(?i)a").is_err());
        assert_eq!(translate(r"\.").unwrap(), r"\.");
        for bad in ["", "a|", "|a", "(a|)", "*a", "a**", "a*?", "(a"] {
            assert!(translate(bad).is_err(), "{bad}");
        }
        assert!(translate("()").is_ok());
    }
}
