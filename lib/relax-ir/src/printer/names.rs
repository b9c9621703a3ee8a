//! Printed names: sanitising name hints and keeping them unique within live scopes.
//!
//! TVM's rules (`text-format.md` §10), checked against TVM 0.25:
//! * every byte outside `[A-Za-z0-9_]` becomes `_`, so a two-byte UTF-8 character gives
//!   `__`; an empty hint becomes `v`;
//! * a taken name gets the first free suffix `_1`, `_2`, ... (`storage_1` taken gives
//!   `storage_1_1`);
//! * `I`, `T`, `R`, `cls` and `Module` are always taken;
//! * a name is freed when the scope (frame) that defined it ends.
//!
//! Two project rules go beyond TVM, which prints text its own parser rejects in these
//! cases: Python keywords are always taken (TVM prints `if: R.Tensor(...) = ...`), and a
//! hint that starts with a digit gets a `_` prefix (TVM prints `1abc`).

use std::collections::{HashMap, HashSet};

use crate::entities::{Buffer, SymVar, Var};

/// Names that are never given to a variable.
const RESERVED: &[&str] = &[
    "I", "T", "R", "cls", "Module", // script prefixes and the module alias
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// The sanitised form of a name hint (before uniquing).
pub fn sanitize_name(hint: &str) -> String {
    let mut s: String =
        hint.bytes().map(|b| if b.is_ascii_alphanumeric() || b == b'_' { char::from(b) } else { '_' }).collect();
    if s.is_empty() {
        s.push('v');
    } else if s.as_bytes()[0].is_ascii_digit() {
        s.insert(0, '_');
    }
    s
}

/// An entity that owns a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Ent {
    Var(Var),
    Sym(SymVar),
    Buf(Buffer),
}

struct Entry {
    name: Option<String>,
    ent: Option<Ent>,
    prev: Option<String>,
}

/// Scoped name allocation. Scope 0 holds the reserved names and is never popped.
pub(crate) struct Namer {
    live: HashSet<String>,
    map: HashMap<Ent, String>,
    scopes: Vec<Vec<Entry>>,
    /// Per sanitised hint `b`, a suffix `k` such that `b_1` .. `b_{k-1}` are all live: the
    /// search for the first free suffix starts there, so that thousands of variables with
    /// one hint are named in linear time. Lowered when a name `b_j` is freed.
    taken_below: HashMap<String, u64>,
}

impl Namer {
    pub fn new() -> Namer {
        Namer {
            live: RESERVED.iter().map(|s| s.to_string()).collect(),
            map: HashMap::new(),
            scopes: vec![Vec::new()],
            taken_below: HashMap::new(),
        }
    }
    /// Opens a scope and returns its index.
    pub fn push(&mut self) -> usize {
        self.scopes.push(Vec::new());
        self.scopes.len() - 1
    }
    /// Closes the innermost scope, freeing its names and forgetting its entities.
    pub fn pop(&mut self) {
        if self.scopes.len() <= 1 {
            return;
        }
        let Some(entries) = self.scopes.pop() else { return };
        for e in entries.into_iter().rev() {
            if let Some(n) = e.name {
                self.free(&n);
            }
            if let Some(ent) = e.ent {
                match e.prev {
                    Some(p) => {
                        self.map.insert(ent, p);
                    }
                    None => {
                        self.map.remove(&ent);
                    }
                }
            }
        }
    }
    /// The innermost scope.
    pub fn top(&self) -> usize {
        self.scopes.len() - 1
    }
    /// A fresh unique name for `hint`, owned by scope `scope` (clamped to the live scopes),
    /// bound to `ent` if given.
    pub fn define_in(&mut self, scope: usize, hint: &str, ent: Option<Ent>) -> String {
        let base = sanitize_name(hint);
        let mut name = base.clone();
        if self.live.contains(&name) {
            let mut k = self.taken_below.get(&base).copied().unwrap_or(1);
            loop {
                name = format!("{base}_{k}");
                if !self.live.contains(&name) {
                    break;
                }
                k += 1;
            }
            self.taken_below.insert(base, k + 1);
        }
        self.live.insert(name.clone());
        let prev = ent.and_then(|e| self.map.insert(e, name.clone()));
        let scope = scope.min(self.top()).max(1.min(self.top()));
        self.scopes[scope].push(Entry { name: Some(name.clone()), ent, prev });
        name
    }
    /// Frees a name; a name `b_j` may be the first free suffix of hint `b` again.
    fn free(&mut self, name: &str) {
        self.live.remove(name);
        for (i, _) in name.match_indices('_') {
            let (b, digits) = (&name[..i], &name[i + 1..]);
            if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|c| c.is_ascii_digit()) {
                continue;
            }
            if let (Ok(j), Some(below)) = (digits.parse::<u64>(), self.taken_below.get_mut(b))
                && j < *below
            {
                *below = j;
            }
        }
    }
    /// [`Namer::define_in`] the innermost scope.
    pub fn define(&mut self, hint: &str, ent: Option<Ent>) -> String {
        let top = self.top();
        self.define_in(top, hint, ent)
    }
    /// Binds `ent` to a text that is not a plain name (`A.data`), in the innermost scope.
    pub fn alias(&mut self, ent: Ent, text: String) {
        let prev = self.map.insert(ent, text);
        let top = self.top();
        self.scopes[top].push(Entry { name: None, ent: Some(ent), prev });
    }
    /// The current text of `ent`.
    pub fn get(&self, ent: Ent) -> Option<&str> {
        self.map.get(&ent).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relax_entity::EntityRef;

    #[test]
    fn suffixes_and_scopes() {
        let mut n = Namer::new();
        n.push();
        assert_eq!(n.define("storage", None), "storage");
        assert_eq!(n.define("storage", None), "storage_1");
        assert_eq!(n.define("storage_1", None), "storage_1_1");
        assert_eq!(n.define("R", None), "R_1");
        assert_eq!(n.define("if", None), "if_1");
        assert_eq!(n.define("", None), "v");
        assert_eq!(n.define("a.b", None), "a_b");
        assert_eq!(n.define("é", None), "__");
        assert_eq!(n.define("1abc", None), "_1abc");
        n.push();
        let v = Var::new(0);
        assert_eq!(n.define("x", Some(Ent::Var(v))), "x");
        assert_eq!(n.get(Ent::Var(v)), Some("x"));
        n.pop();
        assert_eq!(n.get(Ent::Var(v)), None);
        assert_eq!(n.define("x", None), "x");
    }

    #[test]
    fn freed_suffixes_are_reused_and_many_names_are_fast() {
        let mut n = Namer::new();
        n.push();
        assert_eq!(n.define("y", None), "y");
        n.push();
        assert_eq!(n.define("y", None), "y_1");
        assert_eq!(n.define("y", None), "y_2");
        n.pop();
        // `y_1` and `y_2` are free again: the first free suffix is 1.
        assert_eq!(n.define("y", None), "y_1");
        assert_eq!(n.define("y_2", None), "y_2");
        assert_eq!(n.define("y", None), "y_3");
        // 100,000 variables of one hint: linear, not quadratic.
        let start = std::time::Instant::now();
        for _ in 0..100_000 {
            n.define("z", None);
        }
        assert_eq!(n.define("z", None), "z_100000");
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }
}
