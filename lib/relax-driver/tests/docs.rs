//! Tests that keep the documentation honest: `docs/passes.md` starts with the output of
//! `relax-opt --list-passes` (regenerate with `RELAX_TEST_BLESS=1`, which keeps the
//! hand-written sections after it), and every registered pass has a test folder
//! `test/Transform/<pass>/`.

use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn list_passes() -> String {
    let mut stdin: &[u8] = &[];
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut io = relax_driver::Io { stdin: &mut stdin, stdout: &mut out, stderr: &mut err };
    let code = relax_driver::opt_main(vec!["relax-opt".into(), "--list-passes".into()], &mut io);
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    String::from_utf8(out).expect("utf-8")
}

const HEADER: &str = "# Passes\n\nThe passes `relax-opt` knows, as `relax-opt --list-passes` prints them. Each has a\nflag of its own and may appear in `--pass-pipeline` (see [pipelines.md](pipelines.md));\nits tests are under `test/Transform/<pass>/`. A test regenerates this list\n(`RELAX_TEST_BLESS=1 cargo test -p relax-driver --test docs`) and fails when it is stale;\nthe sections after it are written by hand.\n\n```text\n";

/// The hand-written part of `docs/passes.md`: what follows the generated list.
fn hand_written(page: &str) -> &str {
    let after_header = page.find("```text\n").map_or("", |i| &page[i + "```text\n".len()..]);
    after_header.find("\n```\n").map_or("", |i| &after_header[i + "\n```\n".len()..])
}

#[test]
fn passes_md_is_up_to_date() {
    let path = repo().join("docs/passes.md");
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    let expected = format!("{HEADER}{}```\n{}", list_passes(), hand_written(&actual));
    if std::env::var_os("RELAX_TEST_BLESS").is_some() {
        std::fs::write(&path, &expected).expect("write docs/passes.md");
        return;
    }
    assert_eq!(actual, expected, "docs/passes.md is stale; run with RELAX_TEST_BLESS=1");
}

#[test]
fn every_pass_has_a_test_folder() {
    let registry = relax_transform::registry();
    for p in registry.passes() {
        let dir = repo().join("test/Transform").join(p.name);
        let has_test = std::fs::read_dir(&dir)
            .map(|rd| rd.filter_map(Result::ok).any(|e| e.path().extension().is_some_and(|x| x == "rlx")))
            .unwrap_or(false);
        assert!(has_test, "pass `{}` has no tests in {}", p.name, dir.display());
    }
}
