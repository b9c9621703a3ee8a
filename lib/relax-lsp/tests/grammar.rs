//! The TextMate grammar (`grammar/relax.tmLanguage.json`) highlights real files as meant.
//!
//! syntect runs Sublime Text's syntax format, so the test converts the TextMate grammar
//! to a `.sublime-syntax` document first (a mechanical translation: `begin`/`end` rules
//! become pushed contexts whose `meta_scope` is the rule's `name`, the end pattern first
//! so that it wins ties, as in TextMate). The conversion refuses any grammar key it does
//! not translate, so the grammar stays within what this test checks. Then:
//!
//! * every `.rlx` file under `test/` highlights without a regex error;
//! * chosen tokens of the shared samples and of test files get their scopes;
//! * every keyword of the lexer (`lib/relax-parser/src/lexer.rs`) gets a keyword scope;
//! * the VS Code extension's copies of the grammar and language configuration are
//!   identical to the ones in `grammar/`.

use std::path::{Path, PathBuf};

use serde_json::Value;
use syntect::parsing::{ParseState, ScopeStack, SyntaxDefinition, SyntaxSet, SyntaxSetBuilder};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Converts a TextMate grammar to a `.sublime-syntax` document.
struct Converter {
    contexts: Vec<(String, Vec<String>)>,
}

/// A YAML scalar (JSON strings are YAML double-quoted strings).
fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

impl Converter {
    fn convert(grammar: &Value) -> String {
        let top = grammar.as_object().unwrap();
        for k in top.keys() {
            assert!(
                ["$schema", "comment", "name", "scopeName", "fileTypes", "patterns", "repository"]
                    .contains(&k.as_str()),
                "unsupported top-level key `{k}`"
            );
        }
        let mut c = Converter { contexts: Vec::new() };
        let main = c.patterns(&grammar["patterns"]);
        c.contexts.push(("main".into(), main));
        for (name, rule) in grammar["repository"].as_object().unwrap() {
            let items = if rule.get("match").is_some() || rule.get("begin").is_some() {
                vec![c.rule(rule)]
            } else {
                check_keys(rule);
                c.patterns(&rule["patterns"])
            };
            c.contexts.push((name.clone(), items));
        }
        let mut out = format!(
            "%YAML 1.2\n---\nname: {}\nscope: {}\nfile_extensions: [rlx]\ncontexts:\n",
            q(grammar["name"].as_str().unwrap()),
            q(grammar["scopeName"].as_str().unwrap())
        );
        for (name, items) in &c.contexts {
            out.push_str(&format!("  {name}:\n"));
            for item in items {
                out.push_str(item);
            }
        }
        out
    }

    fn patterns(&mut self, v: &Value) -> Vec<String> {
        v.as_array().map(|a| a.iter().map(|r| self.rule(r)).collect()).unwrap_or_default()
    }

    fn rule(&mut self, r: &Value) -> String {
        check_keys(r);
        if let Some(inc) = r.get("include").and_then(Value::as_str) {
            let target = match inc {
                "$self" | "$base" => "main",
                _ => inc.strip_prefix('#').unwrap_or_else(|| panic!("unsupported include `{inc}`")),
            };
            return format!("    - include: {target}\n");
        }
        if let Some(m) = r.get("match").and_then(Value::as_str) {
            let mut s = format!("    - match: {}\n", q(m));
            if let Some(n) = r.get("name").and_then(Value::as_str) {
                s.push_str(&format!("      scope: {}\n", q(n)));
            }
            s.push_str(&captures(r.get("captures")));
            return s;
        }
        if let Some(b) = r.get("begin").and_then(Value::as_str) {
            let name = format!("anon-{}", self.contexts.len());
            let mut body = Vec::new();
            if let Some(n) = r.get("name").and_then(Value::as_str) {
                body.push(format!("    - meta_scope: {}\n", q(n)));
            }
            if let Some(n) = r.get("contentName").and_then(Value::as_str) {
                body.push(format!("    - meta_content_scope: {}\n", q(n)));
            }
            let end = r["end"].as_str().expect("a begin rule has an end");
            let end_caps = r.get("endCaptures").or(r.get("captures"));
            body.push(format!("    - match: {}\n{}      pop: true\n", q(end), captures(end_caps)));
            // Reserve the slot before converting nested rules (which push their own).
            self.contexts.push((name.clone(), Vec::new()));
            let slot = self.contexts.len() - 1;
            body.extend(self.patterns(r.get("patterns").unwrap_or(&Value::Null)));
            self.contexts[slot].1 = body;
            let begin_caps = r.get("beginCaptures").or(r.get("captures"));
            return format!("    - match: {}\n{}      push: {name}\n", q(b), captures(begin_caps));
        }
        panic!("a rule without include, match or begin: {r}")
    }
}

fn check_keys(r: &Value) {
    const KNOWN: &[&str] = &[
        "name",
        "match",
        "captures",
        "begin",
        "end",
        "beginCaptures",
        "endCaptures",
        "contentName",
        "patterns",
        "include",
        "comment",
    ];
    for k in r.as_object().unwrap().keys() {
        assert!(KNOWN.contains(&k.as_str()), "the grammar test does not translate `{k}`");
    }
}

fn captures(c: Option<&Value>) -> String {
    let Some(c) = c.and_then(Value::as_object) else { return String::new() };
    let mut s = "      captures:\n".to_string();
    for (k, v) in c {
        let n: usize = k.parse().expect("numeric capture");
        s.push_str(&format!("        {n}: {}\n", q(v["name"].as_str().expect("captures name a scope"))));
    }
    s
}

fn syntax_set() -> SyntaxSet {
    let grammar: Value = serde_json::from_str(&read("grammar/relax.tmLanguage.json")).unwrap();
    let yaml = Converter::convert(&grammar);
    let def = SyntaxDefinition::load_from_str(&yaml, true, None).unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    let mut b = SyntaxSetBuilder::new();
    b.add(def);
    b.build()
}

/// The scopes of every byte of `text`, as runs `(start, end, scopes)`.
fn highlight(ss: &SyntaxSet, text: &str) -> Vec<(usize, usize, Vec<String>)> {
    let syntax = ss.find_syntax_by_scope(syntect::parsing::Scope::new("source.relax").unwrap()).unwrap();
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut out = Vec::new();
    let mut base = 0;
    for line in text.split_inclusive('\n') {
        let ops = state.parse_line(line, ss).unwrap_or_else(|e| panic!("{e:?} at byte {base}"));
        let mut at = 0;
        let names = |s: &ScopeStack| s.as_slice().iter().map(|x| x.build_string()).collect::<Vec<_>>();
        for (pos, op) in ops {
            if pos > at {
                out.push((base + at, base + pos, names(&stack)));
                at = pos;
            }
            stack.apply(&op).unwrap();
        }
        if line.len() > at {
            out.push((base + at, base + line.len(), names(&stack)));
        }
        base += line.len();
    }
    out
}

/// Checks that every byte of the token between the `|` marks of `marked` (looked up in
/// `text` without the marks) has a scope starting with `scope`.
fn check(runs: &[(usize, usize, Vec<String>)], text: &str, marked: &str, scope: &str) {
    let parts: Vec<&str> = marked.split('|').collect();
    assert_eq!(parts.len(), 3, "mark the token as `before|token|after`: {marked}");
    let start = text.find(&parts.concat()).unwrap_or_else(|| panic!("`{}` not found", parts.concat())) + parts[0].len();
    for off in start..start + parts[1].len() {
        let (_, _, scopes) = runs.iter().find(|(s, e, _)| *s <= off && off < *e).unwrap();
        assert!(
            scopes.iter().any(|s| s.starts_with(scope)),
            "`{}` in `{marked}`: byte {} has {scopes:?}, expected {scope}",
            parts[1],
            off - start
        );
    }
}

#[test]
fn chosen_tokens_of_the_samples() {
    let ss = syntax_set();
    let text = read("test/Corpus/shared-samples/tvm-0.25/02_types_match_cast_dps_packed.rlx");
    let runs = highlight(&ss, &text);
    let c = |marked: &str, scope: &str| check(&runs, &text, marked, scope);
    c("|# from tvm.script import ir as I|", "comment.line.number-sign.relax");
    c("|@|I.ir_module", "punctuation.definition.decorator.relax");
    c("@|R.function|\n", "entity.name.function.decorator.relax");
    c("|class| Module", "storage.type.class.relax");
    c("class |Module|:", "entity.name.type.class.relax");
    c("|def| main", "storage.type.function.relax");
    c("def |main|(", "entity.name.function.relax");
    c("main(|x|: R", "variable.parameter.function.relax");
    c("main(x: |R|.Tensor", "entity.name.namespace.relax");
    c("main(x: R.|Tensor|(", "support.type.relax");
    c("Tensor(|dtype|=\"float32\", ndim=2)", "variable.parameter.keyword.relax");
    c("Tensor(dtype=|\"float32\"|, ndim=2)", "string.quoted.double.relax");
    c("Tensor(dtype=\"|float32|\", ndim=2)", "support.type.dtype.relax");
    c("ndim=|2|)", "constant.numeric.integer.decimal.relax");
    c("R.Shape([\"|m|\", \"k\"])", "variable.other.symbolic.relax");
    c("R.Shape([|\"|m\", \"k\"])", "punctuation.definition.string.begin.relax");
    c("R.Prim(\"|int64|\")", "support.type.dtype.relax");
    c("|->| R.Tuple", "punctuation.separator.annotation.result.relax");
    c("        |m| = T.int64()", "variable.other.symbolic.relax");
    c("m = |T|.int64()", "entity.name.namespace.relax");
    c("m = T.|int64|()", "support.type.relax");
    c("|with| R.dataflow", "keyword.control.flow.relax");
    c("with R.|dataflow|()", "support.function.relax");
    c("y: R.Tensor((|m|, k)", "variable.other.symbolic.relax");
    c("R.|match_cast|(x", "support.function.relax");
    c("R.|call_dps_packed|(", "support.function.relax");
    c("(\"|my_ext_func|\"", "string.quoted.double.relax");
    c("|metadata|[", "variable.language.metadata.relax");
    c("[\"relax.expr.Constant\"][|0|]", "constant.numeric.integer.decimal.relax");
    c("t0: R.Tensor((m, k), dtype=\"float32\") |=| t[0]", "keyword.operator.assignment.relax");
    c("|return| (t0", "keyword.control.flow.relax");
    // `"my_ext_func"` is a string, not a symbolic variable.
    let at = text.find("my_ext_func").unwrap();
    let (_, _, scopes) = runs.iter().find(|(s, e, _)| *s <= at && at < *e).unwrap();
    assert!(!scopes.iter().any(|s| s.starts_with("variable.other.symbolic")), "{scopes:?}");

    let text = read("test/Corpus/shared-samples/tvm-0.25/05_llama_decoder_block.rlx");
    let runs = highlight(&ss, &text);
    let c = |marked: &str, scope: &str| check(&runs, &text, marked, scope);
    c("R.|add|(", "support.function.relax");
    c("R.|nn.rms_norm|(", "support.function.relax");
    c("epsilon=|1.0000000000000001e-05|)", "constant.numeric.float.relax");
    c("axes=[|-|1]", "keyword.operator.arithmetic.relax");

    let text = read("test/Corpus/shared-samples/tvm-0.25/01_fuse_matmul_add_relu_exp.rlx");
    let runs = highlight(&ss, &text);
    let c = |marked: &str, scope: &str| check(&runs, &text, marked, scope);
    c("@|T.prim_func|", "entity.name.function.decorator.relax");
    c("R.call_tir(|cls|.matmul", "variable.language.special.cls.relax");
    c("R.call_tir(cls.|matmul|", "entity.name.function.relax");
    c("T.axis.remap(|\"SS\"|", "string.quoted.double.relax");
    c("T.|axis.remap|(", "support.function.relax");
    c("|for| ", "keyword.control.flow.relax");
    c("x: R.Tensor((\"|n|\", 4)", "variable.other.symbolic.relax");

    let text = read("test/Corpus/shared-samples/tvm-0.26/pipeline/14_after_ComputePrimValue.rlx");
    let runs = highlight(&ss, &text);
    let c = |marked: &str, scope: &str| check(&runs, &text, marked, scope);
    c("x: T.|Buffer|((\"n\"", "support.type.relax");
    c("x: T.Buffer((\"|n|\"", "variable.other.symbolic.relax");
    c("x: T.Buffer((\"n\", T.int64(|256|)), \"float32\")", "constant.numeric.integer.decimal.relax");
    c("x: T.Buffer((\"n\", T.int64(256)), \"|float32|\")", "support.type.dtype.relax");
}

#[test]
fn test_file_directives() {
    let ss = syntax_set();
    let text = read("test/Verifier/errors.rlx");
    let runs = highlight(&ss, &text);
    let c = |marked: &str, scope: &str| check(&runs, &text, marked, scope);
    c("# |RUN:| not relax-opt", "keyword.other.directive.lit");
    c("# RUN: |not| relax-opt", "support.function.tool.lit");
    c("# RUN: not |relax-opt|", "support.function.tool.lit");
    c("relax-opt |%s| --split-input-file", "variable.language.substitution.lit");
    c("relax-opt %s |--split-input-file|", "constant.other.option.lit");
    c("# |CHECK:| errors.rlx", "keyword.other.directive.lit");
    c("# CHECK: errors.rlx:|[[@LINE+9]]|:57", "variable.other.filecheck");
    c("# CHECK: errors.rlx:[[@LINE+9]]:57: |error|", "comment.line.number-sign.relax");
    // Prose comments are comments, without directives.
    c("# A |dataflow| variable used after its block.", "comment.line.number-sign.relax");
    let at = text.find("# A dataflow variable").unwrap() + 2;
    let (_, _, scopes) = runs.iter().find(|(s, e, _)| *s <= at && at < *e).unwrap();
    assert!(!scopes.iter().any(|s| s.starts_with("keyword")), "{scopes:?}");

    // The first `expected-error` and `EXACT:` lines anywhere under test/.
    let mut found = (false, false);
    for path in rlx_files(&root().join("test")) {
        let text = std::fs::read_to_string(&path).unwrap();
        let line = |p: &str| text.lines().find(|l| l.trim_start().starts_with(p)).map(str::to_string);
        if !found.0
            && let Some(l) = line("# expected-error")
            && l.contains("{{")
        {
            let runs = highlight(&ss, &text);
            let directive = l.trim_start()[2..].split(' ').next().unwrap();
            check(&runs, &text, &format!("# |{directive}| "), "keyword.other.directive.lit");
            let msg = &l[l.find("{{").unwrap()..];
            check(&runs, &text, &format!("{} |{msg}|", &directive), "string.quoted.other.expected.relax");
            found.0 = true;
        }
        if !found.1
            && let Some(l) = line("# EXACT:")
        {
            let runs = highlight(&ss, &text);
            check(&runs, &text, &format!("|# |{}", &l.trim_start()[2..]), "comment.line.number-sign.relax");
            check(&runs, &text, &format!("# |EXACT:|{}", &l.trim_start()[8..]), "keyword.other.directive.lit");
            found.1 = true;
        }
    }
    assert_eq!(found, (true, true), "no expected-error or EXACT line under test/");
}

fn rlx_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "Output") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|e| e == "rlx") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every test file highlights to its end without a regex error. The TVM-printed op corpus
/// (`test/Corpus/tvm-0.25`, `tvm-0.27`: 2 MB of the same constructs as the shared samples)
/// is left out to keep the test quick.
#[test]
fn every_test_file_highlights() {
    let ss = syntax_set();
    let corpus = [root().join("test/Corpus/tvm-0.25"), root().join("test/Corpus/tvm-0.27")];
    let mut files = rlx_files(&root().join("test"));
    files.retain(|p| !corpus.iter().any(|c| p.starts_with(c)));
    assert!(files.len() > 100, "{}", files.len());
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let runs = highlight(&ss, &text);
        assert_eq!(runs.last().map_or(0, |r| r.1), text.len(), "{}", path.display());
    }
}

#[test]
fn every_lexer_keyword_has_a_keyword_scope() {
    let ss = syntax_set();
    let lexer = read("lib/relax-parser/src/lexer.rs");
    let keywords: Vec<&str> = lexer
        .split("#[token(\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .filter(|t| t.chars().all(|c| c.is_ascii_alphabetic()))
        .collect();
    assert!(keywords.len() >= 25 && keywords.contains(&"lambda"), "{keywords:?}");
    for kw in keywords {
        // Each keyword alone on a line, and after an expression, as it would appear.
        for text in [format!("{kw}\n"), format!("x = a {kw} b\n")] {
            let runs = highlight(&ss, &text);
            let at = text.find(kw).unwrap();
            let (_, _, scopes) = runs.iter().find(|(s, e, _)| *s <= at && at < *e).unwrap();
            assert!(
                scopes
                    .iter()
                    .any(|s| ["keyword.", "storage.type.", "constant.language."].iter().any(|p| s.starts_with(p))),
                "`{kw}` in {text:?} has {scopes:?}"
            );
        }
    }
}

#[test]
fn the_extension_carries_the_same_grammar_and_configuration() {
    for (ours, theirs) in [
        ("grammar/relax.tmLanguage.json", "utils/vscode-relax/syntaxes/relax.tmLanguage.json"),
        ("grammar/language-configuration.json", "utils/vscode-relax/language-configuration.json"),
    ] {
        assert!(read(ours) == read(theirs), "{theirs} differs from {ours}: run `npm run sync` in utils/vscode-relax");
    }
}

#[test]
#[should_panic(expected = "expected support.type")]
fn the_checker_catches_a_wrong_scope() {
    let ss = syntax_set();
    let text = "y = R.add(x, x)\n";
    check(&highlight(&ss, text), text, "R.|add|(", "support.type");
}
