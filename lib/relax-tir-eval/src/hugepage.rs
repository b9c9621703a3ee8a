//! Large tensor storage on transparent huge pages.
//!
//! A fresh zero-filled storage of several megabytes comes from `mmap`, and each first
//! write to one of its 4 KiB pages is a page fault; for a kernel that streams through
//! memory, the faults cost more than the kernel. Like numpy (which does the same for its
//! arrays), storages of at least [`MIN_BYTES`] ask the kernel for huge pages
//! (`madvise(MADV_HUGEPAGE)`), 512 times fewer faults. Elsewhere than Linux it does
//! nothing.
#![cfg_attr(target_os = "linux", expect(unsafe_code, reason = "madvise on memory the Vec owns"))]

/// Storages of at least this many bytes are advised.
pub const MIN_BYTES: usize = 4 << 20;

/// A zero-filled byte vector of `n` bytes, on huge pages when it is large.
pub fn zeroed(n: usize) -> Vec<u8> {
    let v = vec![0u8; n];
    #[cfg(target_os = "linux")]
    if n >= MIN_BYTES {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let aligned = start.next_multiple_of(HUGE);
        let end = (start + n) & !(HUGE - 1);
        if end > aligned {
            // SAFETY: the range lies inside the allocation `v` owns; `madvise` changes
            // only how the kernel backs untouched pages, never their contents.
            unsafe {
                libc::madvise(aligned as *mut libc::c_void, end - aligned, libc::MADV_HUGEPAGE);
            }
        }
    }
    v
}
