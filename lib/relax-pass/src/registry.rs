//! The pass registry: every pass and named pipeline the tools know, by kebab-case name.

use crate::pass::{Anchor, Pass, PassOptions};

/// A typed option of a pass, for `--list-passes` and validation.
#[derive(Clone, Copy, Debug)]
pub struct OptionInfo {
    /// The option key (`max-depth`).
    pub name: &'static str,
    /// One-line description.
    pub help: &'static str,
    /// The default, as text.
    pub default: &'static str,
}

/// Builds a pass from its options, or says why the options are wrong.
pub type PassFactory = fn(&PassOptions) -> Result<Box<dyn Pass>, String>;

/// A registered pass.
#[derive(Clone, Copy)]
pub struct PassInfo {
    /// The kebab-case name (`plan-memory`).
    pub name: &'static str,
    /// Other accepted names (`static-plan-block-memory`).
    pub aliases: &'static [&'static str],
    /// One-line summary.
    pub summary: &'static str,
    /// What the pass runs on.
    pub anchor: Anchor,
    /// Its options.
    pub options: &'static [OptionInfo],
    /// Its constructor.
    pub create: PassFactory,
}

impl std::fmt::Debug for PassInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PassInfo").field("name", &self.name).field("anchor", &self.anchor).finish()
    }
}

/// A registered pipeline: a name for a pipeline text.
#[derive(Clone, Copy, Debug)]
pub struct NamedPipeline {
    /// The name (`zero`).
    pub name: &'static str,
    /// One-line summary.
    pub summary: &'static str,
    /// The pipeline text it expands to.
    pub text: &'static str,
}

/// Every pass and pipeline, in registration order.
#[derive(Debug, Default)]
pub struct PassRegistry {
    passes: Vec<PassInfo>,
    pipelines: Vec<NamedPipeline>,
}

/// Two registrations share a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplicateName(pub String);

impl PassRegistry {
    /// An empty registry.
    pub fn new() -> PassRegistry {
        PassRegistry::default()
    }
    /// Registers a pass; fails when its name or an alias is already taken.
    pub fn register(&mut self, info: PassInfo) -> Result<(), DuplicateName> {
        for n in std::iter::once(info.name).chain(info.aliases.iter().copied()) {
            if self.is_taken(n) {
                return Err(DuplicateName(n.to_string()));
            }
        }
        self.passes.push(info);
        Ok(())
    }
    /// Registers a named pipeline; fails when the name is taken.
    pub fn register_pipeline(&mut self, p: NamedPipeline) -> Result<(), DuplicateName> {
        if self.is_taken(p.name) {
            return Err(DuplicateName(p.name.to_string()));
        }
        self.pipelines.push(p);
        Ok(())
    }
    fn is_taken(&self, n: &str) -> bool {
        self.lookup(n).is_some() || self.pipelines.iter().any(|p| p.name == n)
    }
    /// The pass named `name` or with that alias.
    pub fn lookup(&self, name: &str) -> Option<&PassInfo> {
        self.passes.iter().find(|p| p.name == name || p.aliases.contains(&name))
    }
    /// The pipeline named `name`.
    pub fn pipeline(&self, name: &str) -> Option<&NamedPipeline> {
        self.pipelines.iter().find(|p| p.name == name)
    }
    /// Passes in registration order.
    pub fn passes(&self) -> &[PassInfo] {
        &self.passes
    }
    /// Pipelines in registration order.
    pub fn pipelines(&self) -> &[NamedPipeline] {
        &self.pipelines
    }
    /// The text of `--list-passes`: one line per pass (name, aliases, anchor, summary),
    /// then its options, then the named pipelines. Sorted by name.
    pub fn describe(&self) -> String {
        let mut out = String::from("Passes:\n");
        let mut passes: Vec<&PassInfo> = self.passes.iter().collect();
        passes.sort_by_key(|p| p.name);
        for p in passes {
            out.push_str(&format!("  --{:<28} {}", p.name, p.summary));
            if !p.aliases.is_empty() {
                out.push_str(&format!(" (alias: {})", p.aliases.join(", ")));
            }
            if p.anchor != Anchor::Module {
                out.push_str(&format!(" [{}]", p.anchor.name()));
            }
            out.push('\n');
            for o in p.options {
                out.push_str(&format!("      {}={:<12} {}\n", o.name, o.default, o.help));
            }
        }
        if !self.pipelines.is_empty() {
            out.push_str("Pipelines:\n");
            let mut pipes: Vec<&NamedPipeline> = self.pipelines.iter().collect();
            pipes.sort_by_key(|p| p.name);
            for p in pipes {
                out.push_str(&format!("  {:<30} {} = {}\n", p.name, p.summary, p.text));
            }
        }
        out
    }
}
