//! A perf map of the JIT's machine code: with `RELAX_PERF_MAP` set (to anything but
//! `0` or empty), the JIT appends one line `START SIZE NAME` (hexadecimal, no `0x`) per
//! compiled function to `/tmp/perf-PID.map`, the file `perf report` reads to name
//! addresses in anonymous executable memory (`docs/codegen.md`). The functions and their
//! sizes are the function symbols of each kernel's object file (ELF's symbol table:
//! `KERNEL_packed` and its outlined parallel loops `KERNEL_parN_body`); their addresses
//! are the loaded packed function's address plus their offset from it in the object's
//! text section.

use std::io::Write;

/// The environment variable that asks for the map.
pub const ENV: &str = "RELAX_PERF_MAP";

/// True when [`ENV`] asks for a map.
pub fn asked() -> bool {
    std::env::var_os(ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

/// A function symbol of an object: name, section index, offset in the section, size.
struct Symbol {
    name: String,
    section: u16,
    value: u64,
    size: u64,
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<usize> {
    usize::try_from(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?)).ok()
}

/// The defined function symbols of a little-endian ELF64 object; `None` for anything
/// else (the map is then empty for that object).
fn functions(obj: &[u8]) -> Option<Vec<Symbol>> {
    if obj.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let (shoff, shentsize, shnum) =
        (u64_at(obj, 0x28)?, usize::from(u16_at(obj, 0x3a)?), usize::from(u16_at(obj, 0x3c)?));
    let section = |i: usize| -> Option<(u32, usize, usize, usize)> {
        let h = shoff.checked_add(i.checked_mul(shentsize)?)?;
        Some((u32_at(obj, h + 4)?, u64_at(obj, h + 0x18)?, u64_at(obj, h + 0x20)?, u32_at(obj, h + 0x28)? as usize))
    };
    const SHT_SYMTAB: u32 = 2;
    const STT_FUNC: u8 = 2;
    let (_, off, size, link) = (0..shnum).filter_map(section).find(|s| s.0 == SHT_SYMTAB)?;
    let (_, str_off, str_size, _) = section(link)?;
    let strtab = obj.get(str_off..str_off.checked_add(str_size)?)?;
    let mut out = Vec::new();
    for at in (off..off.checked_add(size)?).step_by(24) {
        let (name, info, shndx) = (u32_at(obj, at)? as usize, *obj.get(at + 4)?, u16_at(obj, at + 6)?);
        if info & 0xf != STT_FUNC || shndx == 0 {
            continue;
        }
        let bytes = strtab.get(name..)?;
        let end = bytes.iter().position(|&c| c == 0)?;
        let name = String::from_utf8_lossy(&bytes[..end]).into_owned();
        out.push(Symbol {
            name,
            section: shndx,
            value: u64_at(obj, at + 8)? as u64,
            size: u64_at(obj, at + 16)? as u64,
        });
    }
    Some(out)
}

/// The map lines of the functions of `obj`, loaded with its symbol `packed` at address
/// `addr`: every function in the same section, at its offset from `packed`.
pub fn lines(obj: &[u8], packed: &str, addr: usize) -> Vec<String> {
    let Some(funcs) = functions(obj) else { return Vec::new() };
    let Some(anchor) = funcs.iter().find(|s| s.name == packed) else { return Vec::new() };
    let base = (addr as u64).wrapping_sub(anchor.value);
    funcs
        .iter()
        .filter(|s| s.section == anchor.section && s.size > 0)
        .map(|s| format!("{:x} {:x} {}", base.wrapping_add(s.value), s.size, s.name))
        .collect()
}

/// Appends `lines` to `/tmp/perf-PID.map`; a file that cannot be written is reported on
/// standard error and otherwise ignored (the map is a diagnostic aid).
pub fn write(lines: &[String]) {
    let path = format!("/tmp/perf-{}.map", std::process::id());
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let r = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = r {
        eprintln!("warning: cannot write the perf map {path}: {e}");
    }
}
