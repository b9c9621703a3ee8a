//! Linking a library's object into a shared library (`relax-translate --emit=lib`,
//! `docs/library.md`) with the target's C compiler driver.
//!
//! The driver is `--linker` when given, else `$RELAX_LINKER`, else the one Debian names
//! for the target: `cc` for the host's architecture, `<arch>-linux-gnu-gcc` for another
//! GNU/Linux one (packages `gcc-aarch64-linux-gnu`, `gcc-riscv64-linux-gnu`). Android
//! has no default: the NDK's `<arch>-linux-android<api>-clang` is given with `--linker`.
//! The library is linked with `-shared -Wl,-Bsymbolic -Wl,--no-undefined -lm`: kernels
//! call each other and their runtime imports inside the library, and a symbol missing
//! at link time is an error now rather than at load time.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The linker to use for `triple` (normalized: `aarch64-unknown-linux-gnu`), unless one
/// was given.
pub fn default_linker(triple: &str, host_triple: &str) -> Result<String, String> {
    if let Ok(l) = std::env::var("RELAX_LINKER")
        && !l.is_empty()
    {
        return Ok(l);
    }
    let arch = triple.split('-').next().unwrap_or_default();
    let host_arch = host_triple.split('-').next().unwrap_or_default();
    if triple.contains("android") {
        return Err(format!(
            "no default linker for `{triple}`: give the Android NDK's compiler with `--linker`, such as \
             `--linker {arch}-linux-android24-clang`"
        ));
    }
    if arch == host_arch {
        return Ok("cc".into());
    }
    if triple.ends_with("linux-gnu") {
        return Ok(format!("{arch}-linux-gnu-gcc"));
    }
    Err(format!("no default linker for `{triple}`: give one with `--linker`"))
}

/// Links `object` into the shared library `out` with `linker`.
pub fn link_shared(object: &[u8], out: &Path, linker: &str) -> Result<(), String> {
    let tmp = temp_object_path(out);
    std::fs::write(&tmp, object).map_err(|e| format!("cannot write `{}`: {e}", tmp.display()))?;
    let result = Command::new(linker)
        .arg("-shared")
        .arg("-o")
        .arg(out)
        .arg(&tmp)
        .args(["-Wl,-Bsymbolic", "-Wl,--no-undefined", "-Wl,-z,noexecstack", "-lm"])
        .output();
    let _ = std::fs::remove_file(&tmp);
    let output = result.map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!(
            "linker `{linker}` not found (install it, e.g. Debian's `gcc-aarch64-linux-gnu` for aarch64, \
             or give another with `--linker`)"
        ),
        _ => format!("cannot run linker `{linker}`: {e}"),
    })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!("linker `{linker}` failed ({}):\n{}", output.status, stderr.trim_end()));
    }
    Ok(())
}

/// A scratch path for the object next to nothing the user owns.
fn temp_object_path(out: &Path) -> PathBuf {
    let stem = out.file_stem().and_then(|s| s.to_str()).unwrap_or("lib");
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    std::env::temp_dir().join(format!("relax-{stem}-{}-{nanos}.o", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_linkers() {
        let host = "x86_64-unknown-linux-gnu";
        if std::env::var_os("RELAX_LINKER").is_some() {
            return;
        }
        assert_eq!(default_linker("x86_64-unknown-linux-gnu", host).unwrap(), "cc");
        assert_eq!(default_linker("aarch64-unknown-linux-gnu", host).unwrap(), "aarch64-linux-gnu-gcc");
        assert_eq!(default_linker("riscv64-unknown-linux-gnu", host).unwrap(), "riscv64-linux-gnu-gcc");
        let e = default_linker("aarch64-unknown-linux-android", host).unwrap_err();
        assert!(e.contains("--linker"), "{e}");
    }

    #[test]
    fn a_missing_linker_is_named() {
        let e = link_shared(b"", Path::new("/nonexistent/x.so"), "relax-no-such-linker").unwrap_err();
        assert!(e.contains("`relax-no-such-linker` not found"), "{e}");
    }
}
