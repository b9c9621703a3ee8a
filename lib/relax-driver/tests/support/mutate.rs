//! Token-level mutations of TVMScript text, shared by the in-tree robustness test
//! (`tests/robustness.rs`) and the structure-aware cargo-fuzz target `mutate_module`
//! (`utils/fuzz`, which includes this file by path).
//!
//! A mutation keeps most of a real module intact and changes one thing a person (or a
//! buggy printer) might get wrong: a line deleted, duplicated, moved or re-indented, an
//! identifier, number or string replaced, a bracket dropped or doubled, a line spliced in
//! from another sample. Everything is deterministic given the [`Rng`] seed and depends on
//! nothing but `std`.

#![allow(dead_code, reason = "each includer uses a different part")]

/// xorshift64*: deterministic and dependency-free.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// A generator from a seed (any value; zero is remapped).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next_u64() % n as u64) as usize }
    }
    /// One of `items` (which must not be empty).
    pub fn pick<'a, T: ?Sized>(&mut self, items: &[&'a T]) -> &'a T {
        items[self.below(items.len())]
    }
    /// True one time in `n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
}

/// Identifiers worth trying in place of another: keywords, namespaces, ops, attribute
/// names, names the lowering treats specially.
pub const IDENTS: &[&str] = &[
    "R",
    "T",
    "I",
    "cls",
    "Module",
    "self",
    "def",
    "class",
    "return",
    "if",
    "else",
    "elif",
    "for",
    "in",
    "with",
    "as",
    "while",
    "pass",
    "None",
    "True",
    "False",
    "not",
    "and",
    "or",
    "lambda",
    "x",
    "y",
    "n",
    "m",
    "lv",
    "gv",
    "main",
    "alloc",
    "function",
    "prim_func",
    "ir_module",
    "dataflow",
    "output",
    "add",
    "multiply",
    "call_tir",
    "call_tir_inplace",
    "call_dps_packed",
    "call_packed",
    "call_pure_packed",
    "match_cast",
    "const",
    "shape",
    "prim_value",
    "str",
    "dtype",
    "Tensor",
    "Shape",
    "Prim",
    "Tuple",
    "Object",
    "Callable",
    "Any",
    "int64",
    "int32",
    "float32",
    "float16",
    "bool",
    "handle",
    "Buffer",
    "match_buffer",
    "sblock",
    "block",
    "axis",
    "remap",
    "spatial",
    "reduce",
    "reads",
    "writes",
    "init",
    "grid",
    "serial",
    "parallel",
    "vectorized",
    "unroll",
    "thread_binding",
    "func_attr",
    "sblock_alloc_buffer",
    "alloc_buffer",
    "where",
    "Cast",
    "Select",
    "if_then_else",
    "let",
    "attr",
    "decl_buffer",
    "evaluate",
    "Add",
    "Div",
    "truncmod",
    "min",
    "max",
    "exp",
    "out_sinfo",
    "sinfo_args",
    "out_ty",
    "ty_args",
    "tir_vars",
    "inplace_indices",
    "axis",
    "axes",
    "private",
    "pure",
    "s_tir",
    "metadata",
    "TypeVar",
    "range",
    "nn",
    "memory",
    "builtin",
    "vm",
    "foo",
    "ndim",
    "vdevice",
    "value",
    "format",
    "print",
    "float8_e4m3fn",
];

/// Numbers worth trying: limits, overflow, floats, odd spellings.
pub const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "4",
    "7",
    "64",
    "255",
    "256",
    "1000",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "-2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
    "0.0",
    "-0.0",
    "1.5",
    "1e-05",
    "1e308",
    "1e309",
    "-1e309",
    "3.4028234663852886e+38",
    "1e-400",
    "0x10",
    "0o7",
    "0b1",
    "1_000",
    "1.",
    ".5",
    "00",
    "1j",
];

/// String literals worth trying (with their quotes).
pub const STRINGS: &[&str] = &[
    "\"\"",
    "\"float32\"",
    "\"int64\"",
    "\"int1024\"",
    "\"float33\"",
    "\"float32x4\"",
    "\"float32x0\"",
    "\"int8x99999999999\"",
    "\"bool\"",
    "\"handle\"",
    "\"void\"",
    "\"uint1\"",
    "\"x\"",
    "\"n\"",
    "\"n + m\"",
    "\"n *\"",
    "\"(\"",
    "\"1\"",
    "\"-1\"",
    "\"SSR\"",
    "\"SSRRSS\"",
    "\"Q\"",
    "\"S\"",
    "\"global\"",
    "\"shared\"",
    "\"threadIdx.x\"",
    "\"root\"",
    "\"inf\"",
    "\"nan\"",
    "\"-inf\"",
    "\"cuda:0:global\"",
    "\"cuda:x\"",
    "\"relax.expr.Constant\"",
    "\"\\x00\"",
    "\"\\u00e9\"",
    "\"é\"",
    "'single'",
    "\"\"\"triple\"\"\"",
    "\"unterminated",
];

/// Punctuation and small pieces worth inserting.
pub const PIECES: &[&str] = &[
    "(", ")", "[", "]", "{", "}", ",", ":", ".", "=", "->", "@", "+", "-", "*", "/", "//", "%", "**", "<", "<=", "==",
    "!=", ">", "and", "not", "\\", ";", "#", "\t", " ", "    ", "\n", "\r\n", "...", "R.", "T.", "cls.", "-", "~",
    "lambda", "*args", "**kw", "x=1", "\0", "é",
];

/// The kind of a token of [`tokenize`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `[A-Za-z_][A-Za-z0-9_]*` (and other letters).
    Ident,
    /// A number, roughly.
    Number,
    /// A quoted string.
    Str,
    /// An opening or closing bracket.
    Bracket,
    /// Spaces, tabs and newlines.
    Space,
    /// Anything else (one character).
    Punct,
}

/// Cuts text into rough tokens (byte ranges); never fails.
pub fn tokenize(text: &str) -> Vec<(Kind, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut it = text.char_indices().peekable();
    while let Some((start, c)) = it.next() {
        let kind;
        let mut end = start + c.len_utf8();
        if c.is_alphabetic() || c == '_' {
            kind = Kind::Ident;
            while let Some(&(i, d)) = it.peek() {
                if d.is_alphanumeric() || d == '_' {
                    end = i + d.len_utf8();
                    it.next();
                } else {
                    break;
                }
            }
        } else if c.is_ascii_digit() {
            kind = Kind::Number;
            let mut prev = c;
            while let Some(&(i, d)) = it.peek() {
                let sign_after_e = (d == '-' || d == '+') && (prev == 'e' || prev == 'E');
                if d.is_ascii_alphanumeric() || d == '.' || d == '_' || sign_after_e {
                    end = i + d.len_utf8();
                    prev = d;
                    it.next();
                } else {
                    break;
                }
            }
        } else if c == '"' || c == '\'' {
            kind = Kind::Str;
            let mut escaped = false;
            while let Some(&(i, d)) = it.peek() {
                if d == '\n' {
                    break;
                }
                end = i + d.len_utf8();
                it.next();
                if escaped {
                    escaped = false;
                } else if d == '\\' {
                    escaped = true;
                } else if d == c {
                    break;
                }
            }
        } else if "()[]{}".contains(c) {
            kind = Kind::Bracket;
        } else if c.is_whitespace() {
            kind = Kind::Space;
            while let Some(&(i, d)) = it.peek() {
                if d.is_whitespace() {
                    end = i + d.len_utf8();
                    it.next();
                } else {
                    break;
                }
            }
        } else {
            kind = Kind::Punct;
        }
        out.push((kind, start..end));
    }
    out
}

/// Replaces a random token of `kind` with `with(rng, old)`; false when there is none.
fn replace_token(text: &mut String, rng: &mut Rng, kind: Kind, with: &mut dyn FnMut(&mut Rng, &str) -> String) -> bool {
    let toks: Vec<_> = tokenize(text).into_iter().filter(|t| t.0 == kind).collect();
    if toks.is_empty() {
        return false;
    }
    let (_, r) = toks[rng.below(toks.len())].clone();
    let new = with(rng, &text[r.clone()]);
    text.replace_range(r, &new);
    true
}

/// Lines of `text`, each with its terminator.
fn lines(text: &str) -> Vec<String> {
    text.split_inclusive('\n').map(str::to_string).collect()
}

/// Applies one random mutation to `text`. `donors` are other texts to splice lines from
/// (may be empty).
pub fn mutate_once(text: &mut String, rng: &mut Rng, donors: &[&str]) {
    match rng.below(16) {
        // Line-level.
        0 | 1 => {
            let mut ls = lines(text);
            if !ls.is_empty() {
                let i = rng.below(ls.len());
                ls.remove(i);
            }
            *text = ls.concat();
        }
        2 => {
            let mut ls = lines(text);
            if !ls.is_empty() {
                let i = rng.below(ls.len());
                let copy = ls[i].clone();
                let at = if rng.one_in(2) { i } else { rng.below(ls.len() + 1) };
                ls.insert(at, copy);
            }
            *text = ls.concat();
        }
        3 => {
            let mut ls = lines(text);
            if ls.len() >= 2 {
                let (a, b) = (rng.below(ls.len()), rng.below(ls.len()));
                ls.swap(a, b);
            }
            *text = ls.concat();
        }
        4 => {
            // Re-indent a line (or a run of lines).
            let mut ls = lines(text);
            if !ls.is_empty() {
                let i = rng.below(ls.len());
                let n = 1 + rng.below(4).min(ls.len() - i - 1);
                let how = rng.below(5);
                for l in &mut ls[i..i + n] {
                    match how {
                        0 => l.insert_str(0, "    "),
                        1 => l.insert(0, '\t'),
                        2 => l.insert(0, ' '),
                        3 => {
                            let cut = l.len() - l.trim_start_matches(' ').len();
                            l.replace_range(..cut.min(4), "");
                        }
                        _ => {
                            let cut = l.len() - l.trim_start_matches(' ').len();
                            l.replace_range(..cut, "");
                        }
                    }
                }
            }
            *text = ls.concat();
        }
        5 => {
            // Splice a line from a donor.
            if let Some(donor) = (!donors.is_empty()).then(|| donors[rng.below(donors.len())]) {
                let dl = lines(donor);
                let mut ls = lines(text);
                if !dl.is_empty() {
                    let mut line = dl[rng.below(dl.len())].clone();
                    if !line.ends_with('\n') {
                        line.push('\n');
                    }
                    let at = rng.below(ls.len() + 1);
                    ls.insert(at, line);
                }
                *text = ls.concat();
            }
        }
        // Token-level.
        6 | 7 => {
            // An identifier: another identifier of this text, or a listed one.
            let own: Vec<String> =
                tokenize(text).into_iter().filter(|t| t.0 == Kind::Ident).map(|t| text[t.1].to_string()).collect();
            replace_token(text, rng, Kind::Ident, &mut |rng, _| {
                if !own.is_empty() && rng.one_in(2) {
                    own[rng.below(own.len())].clone()
                } else {
                    rng.pick(IDENTS).to_string()
                }
            });
        }
        8 => {
            replace_token(text, rng, Kind::Number, &mut |rng, old| {
                if rng.one_in(4) {
                    // Nudge the number by one character.
                    let mut s = old.to_string();
                    s.push(*rng.pick(&[&'0', &'9', &'.', &'e', &'_']));
                    s
                } else {
                    rng.pick(NUMBERS).to_string()
                }
            });
        }
        9 => {
            replace_token(text, rng, Kind::Str, &mut |rng, _| rng.pick(STRINGS).to_string());
        }
        10 => {
            // A bracket: deleted, doubled or swapped for another.
            replace_token(text, rng, Kind::Bracket, &mut |rng, old| match rng.below(3) {
                0 => String::new(),
                1 => old.repeat(2),
                _ => rng.pick(&["(", ")", "[", "]", "{", "}"]).to_string(),
            });
        }
        11 => {
            // Delete a token.
            let toks = tokenize(text);
            if !toks.is_empty() {
                let r = toks[rng.below(toks.len())].1.clone();
                text.replace_range(r, "");
            }
        }
        12 => {
            // Duplicate a run of tokens.
            let toks = tokenize(text);
            if !toks.is_empty() {
                let i = rng.below(toks.len());
                let j = (i + 1 + rng.below(6)).min(toks.len());
                let r = toks[i].1.start..toks[j - 1].1.end;
                let copy = text[r.clone()].to_string();
                text.insert_str(r.end, &copy);
            }
        }
        13 => {
            // Insert a piece between two tokens.
            let toks = tokenize(text);
            let at = if toks.is_empty() { 0 } else { toks[rng.below(toks.len())].1.start };
            text.insert_str(at, rng.pick(PIECES));
        }
        14 => {
            // Swap two tokens.
            let toks: Vec<_> = tokenize(text).into_iter().filter(|t| t.0 != Kind::Space).collect();
            if toks.len() >= 2 {
                let a = toks[rng.below(toks.len())].1.clone();
                let b = toks[rng.below(toks.len())].1.clone();
                let (a, b) = if a.start <= b.start { (a, b) } else { (b, a) };
                if a.end <= b.start {
                    let (sa, sb) = (text[a.clone()].to_string(), text[b.clone()].to_string());
                    text.replace_range(b, &sa);
                    text.replace_range(a, &sb);
                }
            }
        }
        _ => {
            // Truncate at a random character boundary.
            let mut at = rng.below(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text.truncate(at);
        }
    }
}

/// Applies one to `max` random mutations.
pub fn mutate(text: &str, rng: &mut Rng, donors: &[&str], max: usize) -> String {
    let mut s = text.to_string();
    for _ in 0..1 + rng.below(max.max(1)) {
        mutate_once(&mut s, rng, donors);
    }
    s
}

/// Cuts a sample transcript into the sections the parser reads: at lines starting `=== `
/// or `######## `, dropping `prim funcs:` and `out shapes:` lines (see
/// `shared/samples/README.md`). Empty sections are dropped.
pub fn sections(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in text.split_inclusive('\n') {
        if line.starts_with("=== ") || line.starts_with("######## ") {
            out.push(std::mem::take(&mut cur));
        } else if !(line.starts_with("prim funcs:") || line.starts_with("out shapes:")) {
            cur.push_str(line);
        }
    }
    out.push(cur);
    out.retain(|s| !s.trim().is_empty());
    out
}
