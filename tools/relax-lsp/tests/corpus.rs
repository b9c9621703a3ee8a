//! A real LSP session over stdio on text printed by TVM (`test/Corpus/`), which the server
//! was not written against. The expectations come from TVM's own text, not from the
//! server's code:
//!
//! * TVM writes every Relax binding as `name: TYPE = value`, so hovering the name must
//!   show `name: TYPE`, and hovering a call's op name must show `-> TYPE`;
//! * TVM names are unique in a block, so go-to-definition of the next use of a binding's
//!   name (in the same block) must land on the binding's target, and a use of a symbolic
//!   variable must land on an earlier occurrence of that name;
//! * `cls.f` goes to `def f`, and a buffer's use to its `T.match_buffer` or
//!   `T.sblock_alloc_buffer` statement;
//! * the outline's functions are the `def`s of the class, in order;
//! * `tvm-0.25/` files print back byte for byte (`lib/relax-driver/tests/corpus.rs`), so
//!   formatting one is a no-op and formatting a re-indented copy without the import header
//!   gives TVM's text back.
//!
//! A second test feeds truncated and mutated copies of corpus files through `didChange`
//! and checks that the server answers every request after each of them.

mod support;

use serde_json::{Value, json};
use support::{LspClient, Server, range, slice};

const FILES: &[&str] = &[
    "tvm-0.25/relax_match_cast_defines.built.rlx",
    "tvm-0.25/relax_llama_block.fused.rlx",
    "tvm-0.25/relax_if_else_nested.built.rlx",
    "tvm-0.25/relax_closures.built.rlx",
    "tvm-0.25/shapes_symbolic_arith.legalized.rlx",
    "tvm-0.25/relax_tuples_items.vm.rlx",
    "tvm-0.27/gpu_softmax.dlight.rlx",
    "tvm-0.27/nn_frontend_mlp.built.rlx",
    "tvm-0.27/relax_private_calls.legalized.rlx",
    "tvm-0.27/relax_dataflow_mixed_blocks.built.rlx",
    "tvm-0.25/relax_blockbuilder_mlp.built.rlx",
    "tvm-0.25/ops_nn_norms.built.rlx",
    "tvm-0.25/relax_shapes_and_types.built.rlx",
    "tvm-0.27/relax_llama_block.built.rlx",
    "tvm-0.27/relax_closures.lifted.rlx",
    "tvm-0.27/ops_manipulation.built.rlx",
];

fn read(rel: &str) -> String {
    let p = format!("{}/../../test/Corpus/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn uri(rel: &str) -> String {
    format!("file:///corpus/{rel}")
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// UTF-16 column of byte `at` in `line`.
fn col(line: &str, at: usize) -> u32 {
    line[..at].encode_utf16().count() as u32
}

/// A Relax binding as TVM writes it: `name: TYPE = value`.
struct Binding {
    line: usize,
    indent: usize,
    name: String,
    ty: String,
    value: String,
}

/// The `name: R.TYPE = value` lines of a text (TIR lets have `T.` types and are left out).
fn bindings(text: &str) -> Vec<Binding> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let name: String = t.chars().take_while(|&c| is_word(c)).collect();
        let Some(rest) = t[name.len()..].strip_prefix(": R.") else { continue };
        if name.is_empty() {
            continue;
        }
        // The type ends at the first ` = ` outside brackets.
        let mut depth = 0i32;
        let mut split = None;
        for (j, c) in rest.char_indices() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                ' ' if depth == 0 && rest[j..].starts_with(" = ") => {
                    split = Some(j);
                    break;
                }
                _ => {}
            }
        }
        let Some(j) = split else { continue };
        out.push(Binding {
            line: i,
            indent: indent(line),
            name: name.clone(),
            ty: format!("R.{}", &rest[..j]),
            value: rest[j + 3..].to_string(),
        });
    }
    out
}

/// The next whole-word use of `name` after line `from`, outside strings and not as an
/// attribute or keyword, while the lines stay in the block that starts at `from`.
fn next_use(lines: &[&str], from: usize, block_indent: usize, name: &str) -> Option<(usize, usize)> {
    for (i, line) in lines.iter().enumerate().skip(from + 1) {
        if line.trim().is_empty() {
            continue;
        }
        if indent(line) < block_indent {
            return None;
        }
        let mut in_str = false;
        let b = line.as_bytes();
        let mut j = 0;
        while j < b.len() {
            if b[j] == b'"' {
                in_str = !in_str;
            } else if !in_str && line[j..].starts_with(name) {
                let before = line[..j].chars().next_back();
                let after = line[j + name.len()..].chars().next();
                let whole = !before.is_some_and(|c| is_word(c) || c == '.') && !after.is_some_and(is_word);
                let keyword = after == Some('=') && !line[j + name.len()..].starts_with("==");
                let target = line[j + name.len()..].starts_with(": ") || line[j + name.len()..].starts_with(" = ");
                if whole && target && j == indent(line) {
                    // Rebound (another branch): stop looking.
                    return None;
                }
                if whole && !keyword {
                    return Some((i, j));
                }
            }
            j += 1;
        }
    }
    None
}

#[test]
fn tvm_printed_files() {
    let mut s = Server::start();
    let (mut hovers, mut calls, mut defs, mut syms, mut funcs, mut buffers) = (0, 0, 0, 0, 0, 0);
    for rel in FILES {
        let text = read(rel);
        let u = uri(rel);
        let diags = s.open(&u, &text);
        assert!(diags.is_empty(), "{rel}: {diags:?}");
        let lines: Vec<&str> = text.lines().collect();

        for mut b in bindings(&text) {
            let line = lines[b.line];
            if rel.starts_with("tvm-0.27/") {
                // Hover writes types in the canonical dialect (text-format.md §14).
                b.ty = b.ty.replace("R.Any", "R.Object");
            }
            // Hover on the binding's name: its type as TVM wrote it.
            let at = (b.line as u32, col(line, b.indent + b.name.len() / 2));
            let h = s.hover(&u, at).unwrap_or_else(|| panic!("{rel}:{}: no hover on `{}`", b.line + 1, b.name));
            assert!(h.contains(&format!("{}: {}", b.name, b.ty)), "{rel}:{}: {h}", b.line + 1);
            hovers += 1;
            // Hover on the op name of a call: the call's inferred type, which TVM gave the
            // binding (match_cast's target is the cast type, not the value's).
            let op: String = b.value.chars().take_while(|&c| is_word(c) || c == '.').collect();
            if op.starts_with("R.") && b.value[op.len()..].starts_with('(') && op != "R.match_cast" {
                let op_at = line.find(&format!(" = {op}(")).unwrap() + 3 + op.len() - 1;
                let h = s.hover(&u, (b.line as u32, col(line, op_at))).unwrap();
                assert!(h.contains(&format!(") -> {}", b.ty)), "{rel}:{}: {h}", b.line + 1);
                calls += 1;
            }
            // Definition of the next use: the binding's name.
            if let Some((l, c)) = next_use(&lines, b.line, b.indent, &b.name) {
                let d = s.definition(&u, (l as u32, col(lines[l], c + 1)));
                let start = col(line, b.indent) as u64;
                let want = (b.line as u64, start, b.line as u64, start + b.name.encode_utf16().count() as u64);
                assert_eq!(d, Some(want), "{rel}:{}:{}: `{}`", l + 1, c + 1, b.name);
                defs += 1;
            }
        }

        // Symbolic variables declared as `n = T.int64()`: each later use goes to an earlier
        // occurrence of the name.
        for (i, line) in lines.iter().enumerate() {
            let t = line.trim_start();
            let Some(name) = t.strip_suffix(" = T.int64()") else { continue };
            let Some((l, c)) = next_use(&lines, i, indent(line), name) else { continue };
            let d = s.definition(&u, (l as u32, col(lines[l], c))).unwrap_or_else(|| panic!("{rel}:{}", l + 1));
            assert!(d.0 <= l as u64, "{rel}:{}: definition after the use: {d:?}", l + 1);
            assert_eq!(slice(&text, d).trim_matches('"'), name, "{rel}:{}", l + 1);
            let h = s.hover(&u, (l as u32, col(lines[l], c))).unwrap();
            assert!(h.contains(&format!("{name}: T.int64")), "{rel}:{}: {h}", l + 1);
            syms += 1;
        }

        // Functions: `cls.f` goes to `def f`, and its hover is `f`'s `def` line.
        for (i, line) in lines.iter().enumerate() {
            let Some(at) = line.find("cls.") else { continue };
            let name: String = line[at + 4..].chars().take_while(|&c| is_word(c)).collect();
            let def_line = lines.iter().position(|l| l.starts_with(&format!("    def {name}("))).unwrap();
            let d = s.definition(&u, (i as u32, col(line, at + 5)));
            let n = name.len() as u64;
            assert_eq!(d, Some((def_line as u64, 8, def_line as u64, 8 + n)), "{rel}:{}: cls.{name}", i + 1);
            let h = s.hover(&u, (i as u32, col(line, at + 5))).unwrap();
            assert!(h.contains(&format!("def {name}(")), "{rel}:{}: {h}", i + 1);
            funcs += 1;
        }

        // Buffers of PrimFuncs: a use goes to the `x = T.match_buffer(...)` (or
        // `T.sblock_alloc_buffer`) statement's name.
        for (i, line) in lines.iter().enumerate() {
            let t = line.trim_start();
            let Some((name, rhs)) = t.split_once(" = ") else { continue };
            if !(rhs.starts_with("T.match_buffer(") || rhs.starts_with("T.sblock_alloc_buffer(")) {
                continue;
            }
            let Some((l, c)) = next_use(&lines, i, indent(line), name) else { continue };
            let d = s.definition(&u, (l as u32, col(lines[l], c)));
            let start = indent(line) as u64;
            let want = (i as u64, start, i as u64, start + name.len() as u64);
            assert_eq!(d, Some(want), "{rel}:{}:{}: buffer `{name}`", l + 1, c + 1);
            let h = s.hover(&u, (l as u32, col(lines[l], c))).unwrap();
            assert!(h.contains(&format!("{name}: T.Buffer(")), "{rel}:{}: {h}", l + 1);
            buffers += 1;
        }

        // The outline: the class and its functions, in order.
        let symbols = s.call("textDocument/documentSymbol", json!({"textDocument": {"uri": u}}));
        let defs_in_text: Vec<&str> =
            lines.iter().filter_map(|l| l.strip_prefix("    def ")).map(|l| l.split('(').next().unwrap()).collect();
        // (A TVM 0.27 file may declare `n = TypeVar("n")` before the class.)
        let class = symbols.as_array().unwrap().iter().find(|x| x["name"] == "Module");
        let class = class.unwrap_or_else(|| panic!("{rel}: no class in {symbols}"));
        let outline: Vec<&str> =
            class["children"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
        assert_eq!(outline, defs_in_text, "{rel}");

        // Formatting: TVM 0.25's text is the canonical text.
        if rel.starts_with("tvm-0.25/") {
            assert_eq!(s.format(&u).unwrap(), json!([]), "{rel}");
            let reindented: String = text
                .lines()
                .filter(|l| !l.starts_with("# from "))
                .map(|l| format!("{}{}\n", " ".repeat(indent(l) / 2), l.trim_start()))
                .collect();
            assert!(s.change(&u, 2, &reindented).is_empty(), "{rel}");
            let edits = s.format(&u).unwrap();
            assert_eq!(edits.as_array().unwrap().len(), 1, "{rel}");
            assert_eq!(range(&edits[0]["range"]), (0, 0, reindented.lines().count() as u64, 0), "{rel}");
            assert_eq!(edits[0]["newText"], text, "{rel}");
        } else {
            // TVM 0.27's text is another dialect: formatting gives text that formats to itself.
            let edits = s.format(&u).unwrap();
            if let Some(e) = edits.as_array().unwrap().first() {
                let formatted = e["newText"].as_str().unwrap().to_string();
                assert!(s.change(&u, 2, &formatted).is_empty(), "{rel}");
                assert_eq!(s.format(&u).unwrap(), json!([]), "{rel}");
            }
        }
    }
    let counts = [hovers, calls, defs, syms, funcs, buffers];
    assert!(counts.iter().zip([100, 50, 50, 5, 10, 10]).all(|(n, min)| *n > min), "{counts:?}");
    assert!(s.shutdown().success());
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as usize
    }
}

/// Every request after a change: each answers, and none with an internal error.
fn ask_everything(s: &mut Server, u: &str, text: &str, rng: &mut Rng, what: &str) {
    let lines = text.lines().count().max(1);
    let params = |l: usize, c: usize| json!({"textDocument": {"uri": u}, "position": {"line": l, "character": c}});
    for _ in 0..3 {
        let (l, c) = (rng.next() % (lines + 2), rng.next() % 90);
        for m in ["textDocument/hover", "textDocument/definition"] {
            if let Err(e) = s.request(m, params(l, c)) {
                panic!("{what}: {m} at {l}:{c}: {e}");
            }
        }
    }
    let sym = s.request("textDocument/documentSymbol", json!({"textDocument": {"uri": u}}));
    assert!(sym.is_ok(), "{what}: {sym:?}");
    if let Err(e) = s.format(u) {
        // Refused (the text has errors) is fine; a crash is not.
        assert_eq!(e["code"], -32803, "{what}: {e}");
    }
}

#[test]
fn truncated_and_mutated_corpus_files_through_did_change() {
    let mut s = Server::start();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut version = 1;
    for rel in ["tvm-0.25/relax_llama_block.fused.rlx", "tvm-0.27/gpu_softmax.dlight.rlx"] {
        let text = read(rel);
        let u = uri(rel);
        s.open(&u, &text);
        let mut edits: Vec<(String, String)> = Vec::new();
        // Truncations, as while typing the file top to bottom.
        for k in 1..=12 {
            let mut cut = text.len() * k / 13;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            edits.push((format!("{rel} cut at {cut}"), text[..cut].to_string()));
        }
        // Mutations: a byte replaced, a line deleted or duplicated, a range deleted.
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        for k in 0..24 {
            let mut b = text.clone().into_bytes();
            let m = match k % 4 {
                0 => {
                    let at = rng.next() % b.len();
                    b[at] = b"()[]:,.\"=#\n @x0-"[rng.next() % 16];
                    String::from_utf8(b).unwrap_or_else(|_| text.clone())
                }
                1 => {
                    let l = rng.next() % lines.len();
                    lines.iter().enumerate().filter(|&(i, _)| i != l).map(|(_, x)| *x).collect()
                }
                2 => {
                    let l = rng.next() % lines.len();
                    lines.iter().enumerate().flat_map(|(i, x)| if i == l { vec![*x, *x] } else { vec![*x] }).collect()
                }
                _ => {
                    let (a, n) = (rng.next() % text.len(), rng.next() % 200);
                    let e = (a + n).min(text.len());
                    match (text.get(..a), text.get(e..)) {
                        (Some(x), Some(y)) => format!("{x}{y}"),
                        _ => text.clone(),
                    }
                }
            };
            edits.push((format!("{rel} mutation {k}"), m));
        }
        for (what, t) in edits {
            version += 1;
            let diags = s.change(&u, version, &t);
            for d in &diags {
                let msg = d["message"].as_str().unwrap();
                assert!(!msg.contains("internal error"), "{what}: {msg}");
            }
            ask_everything(&mut s, &u, &t, &mut rng, &what);
        }
        // Back to the original: clean again, and lookups work.
        version += 1;
        assert!(s.change(&u, version, &text).is_empty(), "{rel}");
    }
    let status = s.shutdown();
    assert!(status.success(), "{status}");
    let _ = Value::Null;
}
