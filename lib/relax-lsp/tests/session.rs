//! A language-server session over JSON-RPC, in process: initialize, diagnostics on open
//! and change, hover, definition, document symbols, formatting, shutdown.

mod support;

use serde_json::json;
use support::{Client, LspClient, at, range};

const URI: &str = "file:///work/add.rlx";

fn data(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn initialize_advertises_the_features_and_shutdown_is_clean() {
    let c = Client::start();
    let caps = &c.init["capabilities"];
    assert_eq!(c.init["serverInfo"]["name"], "relax-lsp");
    assert_eq!(caps["textDocumentSync"]["change"], 1, "full sync");
    for cap in ["hoverProvider", "definitionProvider", "documentSymbolProvider", "documentFormattingProvider"] {
        assert_eq!(caps[cap], true, "{cap}");
    }
    assert_eq!(caps["positionEncoding"], "utf-16");
    assert_eq!(c.shutdown(), relax_lsp::Exit::Clean);
}

const BROKEN: &str = r#"@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        y = R.add(x, z)
        return y
"#;

#[test]
fn diagnostics_on_open_then_cleared_by_a_fix() {
    let mut c = Client::start();
    let diags = c.open(URI, BROKEN);
    assert_eq!(diags.len(), 1, "{diags:?}");
    let d = &diags[0];
    assert_eq!(d["message"], "undefined variable `z`");
    assert_eq!(d["severity"], 1);
    assert_eq!(d["source"], "relax");
    assert_eq!(range(&d["range"]), (4, 21, 4, 22));

    let fixed = BROKEN.replace("R.add(x, z)", "R.add(x, x)");
    assert!(c.change(URI, 2, &fixed).is_empty());

    // A syntax error, then a type error, then a verifier error (a dataflow variable used
    // after its block), each where the CLI puts it.
    let syntax = fixed.replace("R.add(x, x)", "R.add(x, x");
    let d = c.change(URI, 3, &syntax);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["message"], "unclosed `(`");

    let typed = fixed.replace("y = R.add(x, x)", "y: R.Tensor((5,), dtype=\"float32\") = R.add(x, x)");
    let d = c.change(URI, 4, &typed);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(range(&d[0]["range"]).0, 4);

    let verify = data("dataflow-escape.rlx");
    let d = c.change(URI, 5, &verify);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["message"], "undefined variable `lv`");
    // The secondary label ("defined here, inside a dataflow block") and the note travel as
    // related information.
    let related = d[0]["relatedInformation"].as_array().unwrap();
    assert!(related.iter().any(|r| r["message"].as_str().unwrap().contains("dataflow block")), "{related:?}");
    assert_eq!(c.shutdown(), relax_lsp::Exit::Clean);
}

#[test]
fn positions_are_utf16() {
    let mut c = Client::start();
    // `𝄞` is one character, two UTF-16 units, four bytes.
    let text = BROKEN.replace("y = R.add(x, z)", "y = R.call_pure_packed(\"é𝄞\", x, z, sinfo_args=(R.Object,))");
    let d = c.open(URI, &text);
    assert_eq!(d.len(), 1, "{d:?}");
    let (line, col) = at(&text, "x, |z, sinfo");
    assert_eq!(range(&d[0]["range"]), (line as u64, col as u64, line as u64, col as u64 + 1));
    assert_eq!(col as usize, "        y = R.call_pure_packed(\"é𝄞\", x, ".encode_utf16().count());
}

#[test]
fn hover_shows_inferred_types() {
    let mut c = Client::start();
    let text = data("add.rlx");
    assert!(c.open(URI, &text).is_empty());
    let h = |c: &mut Client, marked: &str| {
        c.hover(URI, at(&text, marked)).unwrap_or_else(|| panic!("no hover at {marked}"))
    };

    // A variable (a use) and a call (on the op name and on its arguments' parentheses).
    assert!(h(&mut c, "R.add(|y, x)").contains("y: R.Tensor((n, 4), dtype=\"float32\")"));
    assert!(h(&mut c, "R.a|dd(y, x)").contains("R.add(y, x) -> R.Tensor((n, 4), dtype=\"float32\")"));
    let call_tir = h(&mut c, "R.call_t|ir");
    assert!(call_tir.contains("-> R.Tensor((n, 4), dtype=\"float32\")"), "{call_tir}");
    // A binding's target, a parameter, the result.
    assert!(h(&mut c, "|z: R.Tensor").contains("z: R.Tensor((n, 4), dtype=\"float32\")"));
    assert!(h(&mut c, "def main(|x").contains("x: R.Tensor((n, 4), dtype=\"float32\")"));
    // A symbolic variable, quoted in the signature and bare in the body.
    assert!(h(&mut c, "main(x: R.Tensor((\"|n\"").contains("n: T.int64"));
    assert!(h(&mut c, "out_sinfo=R.Tensor((|n").contains("symbolic variable of `main`"));
    // A function.
    assert!(h(&mut c, "cls.add_o|ne").contains("def add_one(var_x: T.handle, var_y: T.handle)"));
    // PrimFunc buffers and variables.
    assert!(h(&mut c, "= |x[v0, v1]").contains("x: T.Buffer((n, T.int64(4)), \"float32\")"));
    assert!(h(&mut c, "for |i0").contains("loop variable (serial), extent `n`"));
    assert!(h(&mut c, "x[|v0, v1] +").contains("spatial axis of block `T_add`"));
    // Nothing at a keyword or a comment.
    assert_eq!(c.hover(URI, at(&text, "re|turn z")), None);
    assert_eq!(c.hover(URI, at(&text, "# RU|N")), None);
    assert_eq!(c.shutdown(), relax_lsp::Exit::Clean);
}

#[test]
fn definition_of_variables_functions_symbolic_variables_and_buffers() {
    let mut c = Client::start();
    let text = data("add.rlx");
    assert!(c.open(URI, &text).is_empty());
    let target = |marked: &str| {
        let (l, ch) = at(&text, marked);
        let rest = marked.split('|').nth(1).unwrap();
        let len = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count() as u64;
        (l as u64, ch as u64, l as u64, ch as u64 + len)
    };
    let def = |c: &mut Client, marked: &str| c.definition(URI, at(&text, marked)).unwrap_or_else(|| panic!("{marked}"));
    // Relax variables: a dataflow variable, a parameter.
    assert_eq!(def(&mut c, "R.add(|y, x)"), target("            |y = R.call_tir"));
    assert_eq!(def(&mut c, "R.add(y, |x)"), target("def main(|x"));
    assert_eq!(def(&mut c, "return |z"), target("            |z: R.Tensor"));
    // A module function.
    assert_eq!(def(&mut c, "cls.|add_one"), target("def |add_one"));
    // A symbolic variable: the body's `n` is defined by the quoted dim of the parameter.
    assert_eq!(def(&mut c, "out_sinfo=R.Tensor((|n"), target("main(x: R.Tensor((\"|n"));
    // PrimFunc: a buffer, a loop variable, a block axis, a symbolic variable.
    assert_eq!(def(&mut c, "T.writes(|y"), target("        |y = T.match_buffer"));
    assert_eq!(def(&mut c, "[|i0, i1])"), target("for |i0"));
    assert_eq!(def(&mut c, "y[|v0, v1] ="), target("                |v0, v1 = T.axis"));
    assert_eq!(def(&mut c, "T.grid(|n"), target("        |n = T.int64()\n        x"));
    assert_eq!(c.definition(URI, at(&text, "d|ef main")), None);
    assert_eq!(c.shutdown(), relax_lsp::Exit::Clean);
}

#[test]
fn lookups_use_the_last_good_parse_while_the_text_has_errors() {
    let mut c = Client::start();
    let text = data("add.rlx");
    assert!(c.open(URI, &text).is_empty());
    // Typing a new, unfinished line at the end of `main`.
    let editing = text.replace("        return z\n", "        return z\n        w = R.multiply(\n");
    assert!(!c.change(URI, 2, &editing).is_empty());
    assert!(c.hover(URI, at(&editing, "R.add(|y, x)")).unwrap().contains("y: R.Tensor((n, 4)"));
    assert!(c.definition(URI, at(&editing, "return |z")).is_some());
    // The outline follows the text being typed.
    let symbols = c.call("textDocument/documentSymbol", json!({ "textDocument": { "uri": URI } }));
    assert_eq!(symbols[0]["children"][1]["name"], "main");
    // A word that is not where it was has no answer rather than a wrong one.
    let moved = format!("\n{editing}");
    c.change(URI, 3, &moved);
    assert_eq!(c.hover(URI, at(&moved, "R.add(|y, x)")), None);
    assert_eq!(c.shutdown(), relax_lsp::Exit::Clean);
}

#[test]
fn document_symbols_outline_functions_blocks_and_bindings() {
    let mut c = Client::start();
    let text = data("add.rlx");
    c.open(URI, &text);
    let s = c.call("textDocument/documentSymbol", json!({ "textDocument": { "uri": URI } }));
    let names = |v: &serde_json::Value| -> Vec<String> {
        v.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(names(&s), ["Module"]);
    let module = &s[0]["children"];
    assert_eq!(names(module), ["add_one", "main"]);
    assert_eq!(module[0]["detail"], "T.prim_func(private=True, s_tir=True)");
    assert_eq!(names(&module[0]["children"]), ["n", "x", "y", "T_add"]);
    assert_eq!(names(&module[1]["children"]), ["n", "cls", "dataflow"]);
    let dataflow = &module[1]["children"][2];
    assert_eq!(names(&dataflow["children"]), ["y", "z"]);
    assert_eq!(dataflow["children"][0]["detail"], "R.Tensor((n, 4), dtype=\"float32\")");
    // `main`'s name is its selection range.
    assert_eq!(range(&module[1]["selectionRange"]), {
        let (l, ch) = at(&text, "    def |main");
        (l as u64, ch as u64, l as u64, ch as u64 + 4)
    });
    assert_eq!(c.shutdown(), relax_lsp::Exit::Clean);
}

#[test]
fn formatting_is_the_canonical_printer() {
    let mut c = Client::start();
    let text = data("unformatted.rlx");
    assert!(c.open(URI, &text).is_empty());
    let params = json!({ "textDocument": { "uri": URI }, "options": { "tabSize": 4, "insertSpaces": true } });
    let edits = c.call("textDocument/formatting", params.clone());
    let edits = edits.as_array().unwrap();
    assert_eq!(edits.len(), 1);
    assert_eq!(range(&edits[0]["range"]), (0, 0, text.lines().count() as u64, 0));
    let new_text = edits[0]["newText"].as_str().unwrap();
    let printed = relax_ir::printer::print_module(&relax_parser::parse_module(&text).unwrap());
    let leading = "# Input of the formatting test: hand-written text that the printer rewrites.\n\
                   # RUN: relax-opt %s | FileCheck %s\n# CHECK: R.multiply\n\n";
    assert_eq!(new_text, format!("{leading}{printed}"));
    // Formatted text formats to itself: no edits.
    c.change(URI, 2, new_text);
    assert_eq!(c.call("textDocument/formatting", params.clone()), json!([]));
    // A document that does not parse is refused with the first error.
    c.change(URI, 3, BROKEN);
    let r = c.request("textDocument/formatting", params);
    let err = r.expect_err("formatting refused");
    assert_eq!(err.code, lsp_server::ErrorCode::RequestFailed as i32);
    assert!(err.message.contains("undefined variable `z`"), "{}", err.message);
    assert_eq!(c.shutdown(), relax_lsp::Exit::Clean);
}

#[test]
fn protocol_errors_are_answered() {
    let mut c = Client::start();
    let r = c.request("textDocument/frobnicate", json!({}));
    assert_eq!(r.unwrap_err().code, lsp_server::ErrorCode::MethodNotFound as i32);
    let r = c.request("textDocument/hover", json!({ "nonsense": true }));
    assert_eq!(r.unwrap_err().code, lsp_server::ErrorCode::InvalidParams as i32);
    // A document that is not open has no hover.
    assert_eq!(c.hover("file:///nowhere.rlx", (0, 0)), None);
    // `exit` without `shutdown` ends the session abruptly.
    c.notify("exit", serde_json::Value::Null);
}
