//! The registry of this crate's passes: every pass builds with no options and with each
//! option set to its declared default, and the kinds are the anchors `--list-passes`
//! shows.

use relax_pass::{Anchor, PassOptions};

#[test]
fn every_pass_builds_with_its_defaults() {
    let r = relax_transform::registry();
    assert_eq!(r.passes().len(), relax_transform::PASSES.len());
    for p in r.passes() {
        let built = p.create(&PassOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(built.anchor(), p.anchor(), "{}", p.name);
        let defaults = PassOptions(p.options.iter().map(|o| (o.name.to_string(), o.default.to_string())).collect());
        p.create(&defaults).unwrap_or_else(|e| panic!("the declared defaults of `{}` do not read back: {e}", p.name));
    }
}

#[test]
fn anchors_follow_the_pass_traits() {
    let r = relax_transform::registry();
    let anchor = |name: &str| r.lookup(name).map(|p| p.anchor());
    assert_eq!(anchor("normalize"), Some(Anchor::RelaxFunction));
    assert_eq!(anchor("annotate-tir-op-pattern"), Some(Anchor::PrimFunc));
    assert_eq!(anchor("dce"), Some(Anchor::Module));
}

#[test]
fn typed_options_reach_the_pass() {
    use relax_transform::fuse_ops::{FuseOps, FuseOpsOptions};
    assert_eq!(FuseOpsOptions::default(), FuseOpsOptions { max_depth: 256, opt_level: 2, matmul_operands: false });
    let off = FuseOps::new(FuseOpsOptions { opt_level: 0, ..Default::default() });
    assert!(!off.fuse);
    assert_eq!(FuseOps::default().max_depth, 256);
    let err = relax_transform::fuse_ops::INFO
        .create(&PassOptions(vec![("max-depth".into(), "x".into())]))
        .expect_err("not an integer");
    assert_eq!(err, "pass `fuse-ops`: option `max-depth` must be a non-negative integer, found `x`");
}
