//! Round-trips the corpus of text printed by real TVM releases (`test/Corpus/`, made by
//! `utils/tvm/make_corpus.py`; see `test/Corpus/README.md`).
//!
//! * `tvm-0.25/`: every file parses, verifies, and prints back byte for byte (TVM's
//!   `script()` has no final newline, the files and our printer end with one).
//! * `tvm-0.27/`: every file parses and verifies, and printing is idempotent. Where
//!   `tvm-0.25/` has a file of the same name (the same module, printed by TVM 0.25), our
//!   print of the 0.27 text equals it, except for the two differences that the HEAD dialect
//!   cannot carry (see [`normalize_head_losses`]):
//!   * a PrimFunc buffer parameter printed inline as `x: T.Buffer((n, ...))` loses the
//!     name of its handle, so the parser names it `var_x`, where 0.25 printed the handle
//!     FuseTIR made (`p_x`, `p_output0`);
//!   * HEAD passes extra scalars of `R.call_tir` inside the argument tuple (`(x, n)`, read
//!     as `R.prim_value(n)`), with the PrimFunc's scalar parameters before its outputs,
//!     where 0.25 printed `tir_vars=R.shape([n])` and the scalars last.
//!
//! Where TVM 0.27 builds a *different module* than TVM 0.25 from the same input (its
//! passes and Python API changed), the comparison with the 0.25 file is meaningless; those
//! files are listed in [`DIFFERENT_MODULES`], with the difference, and still have to
//! parse, verify and print idempotently. Files that do not pass yet are listed in
//! [`EXPECTED_FAILURES`], with the reason. Both lists are checked: an entry that no longer
//! applies fails the test, so they stay current when the corpus is regenerated.
//!
//! Failures are collected and reported together, one line per file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// TVM 0.27 files whose module is not the one of the 0.25 file of the same name: TVM 0.27's
/// passes or Python API build something else. Only the comparison with 0.25 is skipped.
const DIFFERENT_MODULES: &[(&str, &str)] = &[
    ("gpu_fused_mlp.dlight_fused.rlx", "dlight names the stride variables of wmma buffers `d1, d0`, not `C_s0, C_s1`"),
    ("gpu_matmul.dlight.rlx", "dlight names the stride variables of wmma buffers `d1, d0`, not `C_s0, C_s1`"),
    (
        "ops_arg_reductions.legalized.rlx",
        "LegalizeOps binds the 0-d reduction axis as `T.axis.spatial(T.int64(1), ...)`",
    ),
    ("ops_image.built.rlx", "`R.image.affine_grid` has a new attribute `align_corners`"),
    ("ops_image.legalized.rlx", "LegalizeOps names the loop variables of `affine_grid` `i0, i1`, not `i, j`"),
    (
        "ops_misc_more.built.rlx",
        "`R.layout_transform` keeps unset axis separators as `None` and `pad_value` as a TIR value; `R.unique` takes bool flags",
    ),
    ("ops_nn_activations.legalized.rlx", "LegalizeOps legalizes `R.nn.dropout` (0.25 leaves it)"),
    ("ops_nn_pool_variants.legalized.rlx", "LegalizeOps computes adaptive-pool bounds differently"),
    ("ops_reductions.legalized.rlx", "LegalizeOps binds the 0-d reduction axis as `T.axis.spatial(T.int64(1), ...)`"),
    (
        "ops_strided_slice.legalized.rlx",
        "LegalizeOps clamps symbolic strided-slice starts (`T.min(T.int64(0), n) + v`)",
    ),
    ("relax_call_tir_forms.callrewrite.rlx", "FuseOps also fuses the two `scale` calls"),
    ("relax_call_tir_forms.killed.rlx", "FuseOps also fuses the two `scale` calls; the planned storage differs"),
    ("relax_call_tir_forms.planned.rlx", "FuseOps also fuses the two `scale` calls; the planned storage differs"),
    ("relax_call_tir_forms.vm.rlx", "FuseOps also fuses `call_tir_inplace` with the next call"),
    ("relax_llama_block.vm.rlx", "VM lowering prints types inside `ErrorContext` strings in the HEAD spelling"),
    ("relax_match_cast_defines.vm.rlx", "VMShapeLower emits other checks (`R.null_value()` results)"),
    ("relax_shapes_and_types.vm.rlx", "VMShapeLower emits no checks for unconstrained tensor parameters"),
    ("relax_tuples_items.vm.rlx", "VM lowering prints types inside `ErrorContext` strings in the HEAD spelling"),
    ("shapes_symbolic_arith.vm.rlx", "VM lowering prints types inside `ErrorContext` strings in the HEAD spelling"),
    ("te_custom_compute.vm.rlx", "VM lowering prints types inside `ErrorContext` strings in the HEAD spelling"),
];

/// Files that do not pass yet, as `folder/file`, with the reason.
const EXPECTED_FAILURES: &[(&str, &str)] = &[
    (
        "tvm-0.25/lowered_add_exp.lowered.rlx",
        "lowered TIR (optional in the format): `y_2 = y_1[0:16]` buffer views, flat `T.attr(...)`, \
         pointer-typed parameters `T.handle(\"void\", \"global\")` are not read or printed as TVM 0.25 does",
    ),
    (
        "tvm-0.27/lowered_add_exp.lowered.rlx",
        "lowered TIR (optional in the format): TVM 0.27 prints other lowered forms than 0.25 \
         (`T.decl_buffer(..., data=y.data)`, untyped `result: T.handle`)",
    ),
    (
        "tvm-0.25/relax_if_else_nested.vm.rlx",
        "TVM prints `storage_1: R.Object` (a declaration without value) for a variable that memory \
         planning uses in the other branch than the one defining it; TVM cannot parse this text either",
    ),
    (
        "tvm-0.27/relax_if_else_nested.vm.rlx",
        "TVM prints `storage_1: R.Any` (a declaration without value); see the 0.25 file",
    ),
    (
        "tvm-0.25/relax_tuples_items.built.rlx",
        "TVM prints an empty-tuple binding used later as `R.tuple()` plus a declaration \
         `empty: R.Tuple` without value; TVM cannot parse this text either",
    ),
    ("tvm-0.25/relax_tuples_items.legalized.rlx", "as `relax_tuples_items.built.rlx`"),
    ("tvm-0.27/relax_tuples_items.built.rlx", "as the 0.25 file"),
    ("tvm-0.27/relax_tuples_items.legalized.rlx", "as the 0.25 file"),
];

fn expected_failure(folder: &str, file: &str) -> bool {
    EXPECTED_FAILURES.iter().any(|(f, _)| f.strip_prefix(folder).and_then(|r| r.strip_prefix('/')) == Some(file))
}

fn corpus_dir(version: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test/Corpus").join(version)
}

fn rlx_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "rlx"))
        .collect();
    files.sort();
    files
}

fn name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Parses and verifies; `Err` is a one-line reason.
fn parse_verified(text: &str) -> Result<relax_ir::Module, String> {
    let m = relax_parser::parse_module(text).map_err(|diags| {
        let d = &diags[0];
        let line = text[..(d.span.start as usize).min(text.len())].matches('\n').count() + 1;
        format!("parse error at line {line}: {} ({} errors)", d.message, diags.len())
    })?;
    relax_ir::verify::verify_module(&m).map_err(|errs| format!("verifier: {} ({} errors)", errs[0], errs.len()))?;
    Ok(m)
}

/// The first differing line of two texts, for a one-line report.
fn first_difference(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let i = e.iter().zip(&a).position(|(x, y)| x != y).unwrap_or(e.len().min(a.len()));
    format!(
        "line {}:\n      expected: {}\n      actual:   {}",
        i + 1,
        e.get(i).copied().unwrap_or("<end>"),
        a.get(i).copied().unwrap_or("<end>")
    )
}

/// Splits `results` (file, failure) by [`EXPECTED_FAILURES`]: the unexpected failures,
/// plus one failure for each listed file of `folder` that passes now.
fn unexpected(folder: &str, results: Vec<(String, Option<String>)>) -> Vec<String> {
    let mut out = Vec::new();
    for (file, failure) in results {
        match (failure, expected_failure(folder, &file)) {
            (Some(f), false) => out.push(f),
            (None, true) => out.push(format!("{file}: passes now; remove it from EXPECTED_FAILURES")),
            _ => {}
        }
    }
    out
}

fn report(folder: &str, total: usize, failures: &[String]) {
    if !failures.is_empty() {
        panic!("{} of {total} files of {folder} fail:\n  {}", failures.len(), failures.join("\n  "));
    }
    assert!(total > 0, "{folder} holds no .rlx files");
}

#[test]
fn tvm_025_text_prints_back_exactly() {
    let files = rlx_files(&corpus_dir("tvm-0.25"));
    let mut results = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("corpus files are UTF-8");
        let failure = match parse_verified(&text) {
            Err(e) => Some(format!("{}: {e}", name(path))),
            Ok(m) => {
                let printed = relax_ir::printer::print_module(&m);
                (printed.trim_end_matches('\n') != text.trim_end_matches('\n'))
                    .then(|| format!("{}: differs at {}", name(path), first_difference(&text, &printed)))
            }
        };
        results.push((name(path), failure));
    }
    report("tvm-0.25", files.len(), &unexpected("tvm-0.25", results));
}

#[test]
fn tvm_027_text_reads_as_the_025_spelling() {
    let files = rlx_files(&corpus_dir("tvm-0.27"));
    let canonical_dir = corpus_dir("tvm-0.25");
    let mut results = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("corpus files are UTF-8");
        results.push((name(path), check_027(&text, &name(path), &canonical_dir)));
    }
    let mut failures = unexpected("tvm-0.27", results);
    for (file, _) in DIFFERENT_MODULES {
        if !files.iter().any(|p| name(p) == *file) {
            failures.push(format!("{file}: listed in DIFFERENT_MODULES but not in the corpus"));
        }
    }
    report("tvm-0.27", files.len(), &failures);
}

/// Parses, verifies and prints one 0.27 file twice, and compares it with the 0.25 file of
/// the same name; `Some` is the failure.
fn check_027(text: &str, file: &str, canonical_dir: &Path) -> Option<String> {
    let first = match parse_verified(text) {
        Err(e) => return Some(format!("{file}: {e}")),
        Ok(m) => relax_ir::printer::print_module(&m),
    };
    let second = match parse_verified(&first) {
        Err(e) => return Some(format!("{file}: our print does not read back: {e}")),
        Ok(m) => relax_ir::printer::print_module(&m),
    };
    if first != second {
        return Some(format!("{file}: printing is not idempotent at {}", first_difference(&first, &second)));
    }
    let canonical = std::fs::read_to_string(canonical_dir.join(file)).ok()?;
    let canonical = canonical.trim_end_matches('\n');
    let ours = first.trim_end_matches('\n');
    let moved = tir_vars_callees(canonical);
    let same = ours == canonical || normalize_head_losses(canonical, &moved) == normalize_head_losses(ours, &moved);
    let listed = DIFFERENT_MODULES.iter().any(|(f, _)| *f == file);
    match (same, listed) {
        (false, false) => Some(format!(
            "{file}: differs from the 0.25 print at {}",
            first_difference(&normalize_head_losses(canonical, &moved), &normalize_head_losses(ours, &moved))
        )),
        (true, true) => Some(format!("{file}: equals the 0.25 print now; remove it from DIFFERENT_MODULES")),
        _ => None,
    }
}

/// Erases, in one printed module, the two differences that reading the HEAD dialect
/// cannot avoid, so that the 0.25 print and our print of the 0.27 text compare equal:
///
/// * The handle parameter of each `B = T.match_buffer(H, ...)` is renamed `var_B`
///   everywhere in its PrimFunc (HEAD prints the buffer inline and drops `H`).
/// * `R.call_tir(f, (args), out_sinfo=S, tir_vars=R.shape([a, b]))` becomes
///   `R.call_tir(f, (args, R.prim_value(a), R.prim_value(b)), out_sinfo=S)`, and the
///   parameters of the PrimFuncs named in `moved` (those the 0.25 text calls with
///   `tir_vars=`) are sorted, since their scalars move from after the outputs to before
///   them.
///
/// Nothing else changes, so any other difference still fails.
fn normalize_head_losses(text: &str, moved: &[String]) -> String {
    let mut out = Vec::new();
    for func in split_functions(text) {
        let mut renames: BTreeMap<String, String> = BTreeMap::new();
        for line in &func {
            if let Some((buffer, handle)) = match_buffer_handle(line) {
                renames.insert(handle, format!("var_{buffer}"));
            }
        }
        for line in func {
            let mut line = rename_words(&line, &renames);
            if line.contains("tir_vars=R.shape([") {
                line = move_tir_vars(&line);
            }
            let t = line.trim_start();
            if moved.iter().any(|f| t.strip_prefix("def ").is_some_and(|r| r.starts_with(&format!("{f}(")))) {
                line = sort_params(&line);
            }
            out.push(line);
        }
    }
    out.join("\n")
}

/// The PrimFuncs that `R.call_tir(cls.f, ..., tir_vars=...)` calls in `text`.
fn tir_vars_callees(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains("tir_vars=R.shape(["))
        .filter_map(|l| l.split("R.call_tir(").nth(1))
        .filter_map(|rest| rest.split([',', ' ']).next())
        .map(|callee| callee.trim_start_matches("cls.").to_string())
        .collect()
}

/// Splits the text into chunks that start at each `def` line at the member level, so that
/// renames stay inside one function.
fn split_functions(text: &str) -> Vec<Vec<String>> {
    let mut chunks: Vec<Vec<String>> = vec![Vec::new()];
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with('@') && line.len() - t.len() <= 4 {
            chunks.push(Vec::new());
        }
        chunks.last_mut().expect("one chunk").push(line.to_string());
    }
    chunks
}

/// `(B, H)` of a line `B = T.match_buffer(H, ...)` whose handle is not already `var_B`.
fn match_buffer_handle(line: &str) -> Option<(String, String)> {
    let (lhs, rhs) = line.trim_start().split_once(" = T.match_buffer(")?;
    let handle = rhs.split([',', ')']).next()?.trim();
    let is_word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (is_word(lhs) && is_word(handle) && handle != format!("var_{lhs}")).then(|| (lhs.to_string(), handle.to_string()))
}

/// Replaces whole identifiers.
fn rename_words(line: &str, renames: &BTreeMap<String, String>) -> String {
    if renames.is_empty() {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(renames.get(word.as_str()).map_or(word.as_str(), String::as_str));
        word.clear();
    };
    let mut in_string = false;
    for c in line.chars() {
        if c == '"' {
            in_string = !in_string;
        }
        if !in_string && (c.is_ascii_alphanumeric() || c == '_') {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Moves the dims of a trailing `tir_vars=R.shape([...])` into the argument tuple of the
/// `R.call_tir` on the line, as `R.prim_value(...)` fields.
fn move_tir_vars(line: &str) -> String {
    let Some(start) = line.find(", tir_vars=R.shape([") else { return line.to_string() };
    let rest = &line[start + ", tir_vars=R.shape([".len()..];
    let Some(end) = rest.find("]))") else { return line.to_string() };
    let dims = split_top_level(&rest[..end]);
    let without = format!("{}{}", &line[..start], &rest[end + "]))".len() - 1..]);
    let Some(call) = without.find("R.call_tir(") else { return line.to_string() };
    let Some(open) = without[call..].find(", (").map(|i| call + i + 3) else { return line.to_string() };
    let Some(close) = matching_paren(&without, open - 1) else { return line.to_string() };
    let mut fields: Vec<String> =
        split_top_level(&without[open..close]).into_iter().filter(|f| !f.is_empty()).collect();
    fields.extend(dims.into_iter().map(|d| format!("R.prim_value({d})")));
    let tuple = if fields.len() == 1 { format!("{},", fields[0]) } else { fields.join(", ") };
    format!("{}{tuple}{}", &without[..open], &without[close..])
}

/// Sorts the parameters of a `def` line (PrimFunc signatures only reach here).
fn sort_params(line: &str) -> String {
    let Some(open) = line.find('(') else { return line.to_string() };
    let Some(close) = matching_paren(line, open) else { return line.to_string() };
    let mut params = split_top_level(&line[open + 1..close]);
    params.sort();
    format!("{}{}{}", &line[..=open], params.join(", "), &line[close..])
}

/// The index of the bracket closing the one at `open`.
fn matching_paren(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut in_string = false;
    for (i, c) in s.char_indices().skip_while(|&(i, _)| i < open) {
        match c {
            '"' => in_string = !in_string,
            '(' | '[' | '{' if !in_string => depth += 1,
            ')' | ']' | '}' if !in_string => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits at the commas outside brackets and strings; trims each part.
fn split_top_level(s: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let (mut depth, mut in_string, mut cur) = (0i32, false, String::new());
    for c in s.chars() {
        match c {
            '"' => in_string = !in_string,
            '(' | '[' | '{' if !in_string => depth += 1,
            ')' | ']' | '}' if !in_string => depth -= 1,
            ',' if depth == 0 && !in_string => {
                parts.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        parts.push(cur.trim().to_string());
    }
    parts
}

#[test]
fn head_loss_normalization_is_narrow() {
    let a = "    @T.prim_func(private=True, s_tir=True)\n    def f(p_x: T.handle, p_output0: T.handle):\n        x = T.match_buffer(p_x, (n,))\n        y = T.match_buffer(p_output0, (n,))\n        p_xx = 1";
    let b = "    @T.prim_func(private=True, s_tir=True)\n    def f(var_x: T.handle, var_y: T.handle):\n        x = T.match_buffer(var_x, (n,))\n        y = T.match_buffer(var_y, (n,))\n        p_xx = 1";
    assert_eq!(normalize_head_losses(a, &[]), normalize_head_losses(b, &[]));
    let c = "    def f(x: T.handle, y: T.handle, n: T.int64):\n            y = R.call_tir(cls.f, (x,), out_sinfo=R.Tensor((n,), dtype=\"float32\"), tir_vars=R.shape([n, 2]))";
    let d = "    def f(x: T.handle, n: T.int64, y: T.handle):\n            y = R.call_tir(cls.f, (x, R.prim_value(n), R.prim_value(2)), out_sinfo=R.Tensor((n,), dtype=\"float32\"))";
    let moved = tir_vars_callees(c);
    assert_eq!(moved, ["f"]);
    assert_eq!(normalize_head_losses(c, &moved), normalize_head_losses(d, &moved));
    // Other differences survive.
    assert_ne!(normalize_head_losses(c, &[]), normalize_head_losses(d, &[]));
    assert_ne!(
        normalize_head_losses("    def f(x: T.handle):", &[]),
        normalize_head_losses("    def g(x: T.handle):", &[])
    );
    assert_ne!(normalize_head_losses("y = R.add(a, b)", &[]), normalize_head_losses("y = R.add(b, a)", &[]));
}
