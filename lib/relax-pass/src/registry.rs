//! The pass registry: every pass and named pipeline the tools know, by kebab-case name.
//! Entries are usually made by [`declare_pass!`](crate::declare_pass).

use crate::anchor::Anchor;
use crate::options::{OptionError, PassOptions};
use crate::pass::{ModulePass, PassKind, PrimFuncPass, RelaxFunctionPass};

pub use crate::options::OptionInfo;

/// How a pass is built from its options. The variant is the pass's kind, and so its
/// anchor: a factory cannot build a pass of another kind than it says.
#[derive(Clone, Copy)]
pub enum PassFactory {
    /// Builds a module pass.
    Module(fn(&PassOptions) -> Result<Box<dyn ModulePass>, OptionError>),
    /// Builds a Relax function pass.
    RelaxFunction(fn(&PassOptions) -> Result<Box<dyn RelaxFunctionPass>, OptionError>),
    /// Builds a PrimFunc pass.
    PrimFunc(fn(&PassOptions) -> Result<Box<dyn PrimFuncPass>, OptionError>),
}

impl PassFactory {
    /// What the passes it builds run on.
    pub fn anchor(&self) -> Anchor {
        match self {
            PassFactory::Module(_) => Anchor::Module,
            PassFactory::RelaxFunction(_) => Anchor::RelaxFunction,
            PassFactory::PrimFunc(_) => Anchor::PrimFunc,
        }
    }
    /// Builds the pass.
    pub fn build(&self, o: &PassOptions) -> Result<PassKind, OptionError> {
        Ok(match self {
            PassFactory::Module(f) => PassKind::Module(f(o)?),
            PassFactory::RelaxFunction(f) => PassKind::RelaxFunction(f(o)?),
            PassFactory::PrimFunc(f) => PassKind::PrimFunc(f(o)?),
        })
    }
}

impl std::fmt::Debug for PassFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PassFactory::{:?}", self.anchor())
    }
}

/// A registered pass.
#[derive(Clone, Copy)]
pub struct PassInfo {
    /// The kebab-case name (`plan-memory`).
    pub name: &'static str,
    /// Other accepted names (`static-plan-block-memory`).
    pub aliases: &'static [&'static str],
    /// One-line summary.
    pub summary: &'static str,
    /// Its options.
    pub options: &'static [OptionInfo],
    /// Its constructor, which also fixes its anchor.
    pub factory: PassFactory,
}

impl PassInfo {
    /// What the pass runs on.
    pub fn anchor(&self) -> Anchor {
        self.factory.anchor()
    }
    /// Builds the pass from `options`, or says (naming the pass) why they are wrong.
    pub fn create(&self, options: &PassOptions) -> Result<PassKind, String> {
        self.factory.build(options).map_err(|e| e.message(self.name))
    }
}

impl std::fmt::Debug for PassInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PassInfo").field("name", &self.name).field("anchor", &self.anchor()).finish()
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
    /// The registered name closest to `name` (a pass, an alias or a pipeline), for a
    /// did-you-mean: a near spelling, else the first name (in byte order) that starts
    /// with `name-` (`canonicalize` → `canonicalize-bindings`).
    pub fn suggest(&self, name: &str) -> Option<&'static str> {
        let names = || {
            self.passes
                .iter()
                .flat_map(|p| std::iter::once(p.name).chain(p.aliases.iter().copied()))
                .chain(self.pipelines.iter().map(|p| p.name))
        };
        relax_ir::diag::suggest(name, names())
            .or_else(|| names().filter(|n| n.strip_prefix(name).is_some_and(|r| r.starts_with('-'))).min())
    }
    /// `; did you mean `NAME`?` for an unknown `name`, or nothing.
    pub fn did_you_mean(&self, name: &str) -> String {
        self.suggest(name).map_or(String::new(), |n| format!("; did you mean `{n}`?"))
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
    /// then its options (the default key marked), then the named pipelines. Sorted by
    /// name.
    pub fn describe(&self) -> String {
        let mut out = String::from("Passes:\n");
        let mut passes: Vec<&PassInfo> = self.passes.iter().collect();
        passes.sort_by_key(|p| p.name);
        for p in passes {
            out.push_str(&format!("  --{:<28} {}", p.name, p.summary));
            if !p.aliases.is_empty() {
                out.push_str(&format!(" (alias: {})", p.aliases.join(", ")));
            }
            if p.anchor() != Anchor::Module {
                out.push_str(&format!(" [{}]", p.anchor().name()));
            }
            out.push('\n');
            for o in p.options {
                let key = if o.default_key { " (the default key: a value alone sets it)" } else { "" };
                out.push_str(&format!("      {}={:<12} {}{key}\n", o.name, o.default, o.help));
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
