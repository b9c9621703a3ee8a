//! The JIT's disk cache of compiled kernels (docs/codegen.md, "The compile cache").
//!
//! An entry is one kernel: its object file (`KEY.o`) and what the runtime needs to call
//! it (`KEY.meta`: its name, a hash of the object's bytes, and its run-time errors with
//! their source spans; the argument slots are derived again from the PrimFunc). `KEY` is a 128-bit SipHash of
//! everything the machine code depends on: the PrimFunc (its printed text, and the
//! source spans of its statements, so that error messages point at the right lines), its name, the target
//! triple, CPU, features and optimization level, the LLVM version, and the identity of
//! the running executable (path, size and modification time), so that a rebuilt
//! compiler never runs code of another build. Entries are written to a temporary file
//! and renamed, so concurrent processes never see half an entry; a damaged entry is
//! a miss. When the directory grows past [`MAX_BYTES`], the least recently used entries
//! (by modification time, refreshed on a hit) are removed.

use std::hash::Hash;
use std::path::{Path, PathBuf};

use relax_codegen::llvm::{Kernel, KernelError, KernelObject, Options};
use relax_codegen::{CodegenError, kernel_abi};
use relax_ir::{Func, Global, Module, Span};
use siphasher::sip128::{Hasher128, SipHasher13};

/// The size past which the least recently used entries are removed.
pub const MAX_BYTES: u64 = 512 << 20;

/// Where compiled kernels are kept.
#[derive(Clone, Debug)]
pub struct ObjectCache {
    dir: PathBuf,
    /// What every key shares: target, options, LLVM, the executable.
    salt: u128,
}

/// The default cache directory: `$RELAX_CACHE_DIR`, else `$XDG_CACHE_HOME/relax`, else
/// `$HOME/.cache/relax`; `None` when none of them is set.
pub fn default_dir() -> Option<PathBuf> {
    let var = |v: &str| std::env::var_os(v).filter(|s| !s.is_empty()).map(PathBuf::from);
    var("RELAX_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("relax")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("relax")))
}

impl ObjectCache {
    /// A cache in `dir` for code generated with `opts`.
    pub fn new(dir: PathBuf, opts: &Options) -> ObjectCache {
        let mut h = SipHasher13::new();
        let (cpu, features) = opts.cpu_and_features();
        relax_codegen::llvm::inkwell::targets::TargetMachine::get_default_triple().as_str().to_bytes().hash(&mut h);
        (cpu, features, opts.opt_level, opts.check_bounds).hash(&mut h);
        relax_codegen::llvm::inkwell::support::get_llvm_version().hash(&mut h);
        env!("CARGO_PKG_VERSION").hash(&mut h);
        if let Ok(exe) = std::env::current_exe() {
            exe.hash(&mut h);
            if let Ok(md) = std::fs::metadata(&exe) {
                md.len().hash(&mut h);
                md.modified().ok().hash(&mut h);
            }
        }
        ObjectCache { dir, salt: h.finish128().as_u128() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of PrimFunc `g` of `m`.
    pub fn key(&self, m: &Module, g: Global) -> String {
        let mut h = SipHasher13::new();
        self.salt.hash(&mut h);
        m.globals[g].name.hash(&mut h);
        if let Some(f) = m.prim_func(g) {
            // The printer is deterministic and complete; the arenas' order is not (passes
            // may build the same function in different orders), so spans go in tree order.
            let mut one = Module::new();
            one.add(m.globals[g].name.clone(), Func::Prim(Box::new(f.clone())));
            relax_ir::printer::print_module(&one).hash(&mut h);
            (f.spans.func.start, f.spans.func.end).hash(&mut h);
            f.walk(f.body, |st, _| {
                let sp = *f.spans.stmts.get(st);
                (sp.start, sp.end).hash(&mut h);
            });
        }
        format!("{:032x}", h.finish128().as_u128())
    }

    /// The kernel stored under `key` for PrimFunc `g` of `m`, when there is a sound one.
    pub fn load(&self, key: &str, m: &Module, g: Global) -> Option<KernelObject> {
        let f = m.prim_func(g)?;
        let meta = std::fs::read_to_string(self.dir.join(format!("{key}.meta"))).ok()?;
        let object_path = self.dir.join(format!("{key}.o"));
        let object = std::fs::read(&object_path).ok()?;
        let name = &m.globals[g].name;
        let (sum, errors) = parse_meta(&meta, name)?;
        if sum != object_sum(&object) {
            return None;
        }
        // Refresh the entry's age for the eviction order.
        if let Ok(file) = std::fs::File::options().append(true).open(&object_path) {
            let _ = file.set_modified(std::time::SystemTime::now());
        }
        let kernel = Kernel {
            global: g,
            name: name.clone(),
            packed_symbol: format!("{name}_packed"),
            abi: kernel_abi(f),
            errors,
        };
        Some(KernelObject { kernel, object, times: Default::default() })
    }

    /// Stores a compiled kernel under `key`; the first error is returned (the caller
    /// goes on without the cache).
    pub fn store(&self, key: &str, k: &KernelObject) -> Result<(), CodegenError> {
        let io = |e: std::io::Error| CodegenError::new(format!("cannot write the cache {}: {e}", self.dir.display()));
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        // The object last: an entry is complete once its `.o` is in place.
        let meta = write_meta(&k.kernel, object_sum(&k.object));
        write_atomic(&self.dir.join(format!("{key}.meta")), meta.as_bytes()).map_err(io)?;
        write_atomic(&self.dir.join(format!("{key}.o")), &k.object).map_err(io)
    }

    /// Removes the least recently used entries while the directory holds more than
    /// [`MAX_BYTES`].
    pub fn evict(&self) {
        let Ok(rd) = std::fs::read_dir(&self.dir) else { return };
        let mut entries: Vec<(std::time::SystemTime, u64, PathBuf)> = rd
            .flatten()
            .filter_map(|e| {
                let p = e.path();
                let md = e.metadata().ok()?;
                if p.extension()? != "o" {
                    return None;
                }
                Some((md.modified().ok()?, md.len(), p))
            })
            .collect();
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        entries.sort();
        for (_, len, p) in entries {
            if total <= MAX_BYTES {
                break;
            }
            let _ = std::fs::remove_file(&p);
            let _ = std::fs::remove_file(p.with_extension("meta"));
            total -= len;
        }
    }
}

/// Writes `bytes` to a temporary file beside `path` and renames it into place.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// The hash of an object file's bytes (a damaged entry is a miss).
fn object_sum(object: &[u8]) -> String {
    let mut h = SipHasher13::new();
    object.hash(&mut h);
    format!("{:032x}", h.finish128().as_u128())
}

/// The `.meta` text: `relax-kernel NAME`, the object's hash, the error count, then per
/// error a line `START END LEN` and the message's LEN bytes on the next line.
fn write_meta(k: &Kernel, sum: String) -> String {
    let mut s = format!("relax-kernel {}\n{sum}\n{}\n", k.name, k.errors.len());
    for e in &k.errors {
        s.push_str(&format!("{} {} {}\n{}\n", e.span.start, e.span.end, e.message.len(), e.message));
    }
    s
}

/// The object hash and the errors of a `.meta` text written for kernel `name`; `None`
/// when it is not one.
fn parse_meta(s: &str, name: &str) -> Option<(String, Vec<KernelError>)> {
    let rest = s.strip_prefix("relax-kernel ")?;
    let (got, rest) = rest.split_once('\n')?;
    if got != name {
        return None;
    }
    let (sum, rest) = rest.split_once('\n')?;
    let (count, mut rest) = rest.split_once('\n')?;
    let count: usize = count.parse().ok()?;
    let mut errors = Vec::with_capacity(count.min(1 << 16));
    for _ in 0..count {
        let (head, tail) = rest.split_once('\n')?;
        let mut it = head.split(' ');
        let start: u32 = it.next()?.parse().ok()?;
        let end: u32 = it.next()?.parse().ok()?;
        let len: usize = it.next()?.parse().ok()?;
        let message = tail.get(..len)?.to_string();
        rest = tail.get(len..)?.strip_prefix('\n')?;
        errors.push(KernelError { message, span: Span { start, end } });
    }
    rest.is_empty().then(|| (sum.to_string(), errors))
}

#[cfg(test)]
mod tests {
    use super::*;
    use relax_entity::EntityRef;

    #[test]
    fn meta_round_trips_and_rejects_damage() {
        let k = Kernel {
            global: Global::new(0),
            name: "add".into(),
            packed_symbol: "add_packed".into(),
            abi: Default::default(),
            errors: vec![
                KernelError { message: "a\nmulti-line message".into(), span: Span { start: 3, end: 9 } },
                KernelError { message: String::new(), span: Span::NONE },
            ],
        };
        let text = write_meta(&k, object_sum(b"obj"));
        assert_eq!(parse_meta(&text, "add"), Some((object_sum(b"obj"), k.errors.clone())));
        assert_ne!(object_sum(b"obj"), object_sum(b"obk"));
        assert_eq!(parse_meta(&text, "other"), None);
        assert_eq!(parse_meta(&text[..text.len() - 2], "add"), None);
        assert_eq!(parse_meta(&format!("{text}x"), "add"), None);
    }
}
