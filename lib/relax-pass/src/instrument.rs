//! Instrumentation hooks around every pass: IR printing, timing and the like are all
//! implementations of one trait.

use std::time::{Duration, Instant};

use relax_ir::Module;

/// Hooks called by the pass manager around each pass execution.
pub trait PassInstrumentation {
    /// Before a pass runs. `pass` is the pass name; `scope` is the function it runs on,
    /// or empty for module passes.
    fn before_pass(&mut self, pass: &str, scope: &str, m: &Module) {
        let _ = (pass, scope, m);
    }
    /// After a pass (and its verification) succeeded.
    fn after_pass(&mut self, pass: &str, scope: &str, m: &Module, changed: bool) {
        let _ = (pass, scope, m, changed);
    }
    /// After a pass or its verification failed.
    fn after_pass_failed(&mut self, pass: &str, scope: &str, m: &Module) {
        let _ = (pass, scope, m);
    }
}

/// Accumulates the wall time of each pass (`--timing`).
#[derive(Debug, Default)]
pub struct Timing {
    started: Option<Instant>,
    /// Per pass name, in first-run order: total time and number of runs.
    pub entries: Vec<(String, Duration, u32)>,
}

impl Timing {
    /// The report printed by `--timing`.
    pub fn report(&self) -> String {
        let total: Duration = self.entries.iter().map(|e| e.1).sum();
        let mut out = String::from("===-------------------------------------------------------------------------===\n");
        out.push_str("                         ... Pass execution timing report ...\n");
        out.push_str("===-------------------------------------------------------------------------===\n");
        out.push_str(&format!("  Total Execution Time: {:.4} seconds\n\n", total.as_secs_f64()));
        out.push_str("  ----Wall Time----  ----Name----\n");
        for (name, d, runs) in &self.entries {
            let pct = if total.is_zero() { 0.0 } else { 100.0 * d.as_secs_f64() / total.as_secs_f64() };
            let suffix = if *runs > 1 { format!(" ({runs} runs)") } else { String::new() };
            out.push_str(&format!("    {:.4} ({:5.1}%)  {name}{suffix}\n", d.as_secs_f64(), pct));
        }
        out.push_str(&format!("    {:.4} (100.0%)  Total\n", total.as_secs_f64()));
        out
    }
    fn stop(&mut self, pass: &str) {
        let Some(t) = self.started.take() else { return };
        let d = t.elapsed();
        match self.entries.iter_mut().find(|e| e.0 == pass) {
            Some(e) => {
                e.1 += d;
                e.2 += 1;
            }
            None => self.entries.push((pass.to_string(), d, 1)),
        }
    }
}

impl PassInstrumentation for Timing {
    fn before_pass(&mut self, _pass: &str, _scope: &str, _m: &Module) {
        self.started = Some(Instant::now());
    }
    fn after_pass(&mut self, pass: &str, _scope: &str, _m: &Module, _changed: bool) {
        self.stop(pass);
    }
    fn after_pass_failed(&mut self, pass: &str, _scope: &str, _m: &Module) {
        self.stop(pass);
    }
}
