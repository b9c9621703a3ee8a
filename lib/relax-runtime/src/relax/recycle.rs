//! Reuse of the storage of dropped `call_tir` results.
//!
//! A decode step allocates the same large results every time (a KV cache copy, its
//! transposes), and a fresh zero-filled allocation of a few hundred kilobytes costs more
//! than the kernel that fills it: the allocator searches its bins, and the memory is
//! either cleared or faulted in page by page. The interpreter therefore keeps the
//! storages of large results it handed out; one that nothing else holds any more (its
//! reference count is back to the keeper's one) is cleared and handed out again for a
//! result of the same size. Results stay zero-filled, as before, except where the
//! kernel is known to overwrite all of a result before reading it
//! ([`crate::native::NativeKernels::overwrites`]): then clearing it would be wasted.

use std::cell::RefCell;
use std::rc::Rc;

use crate::value::Bytes;

/// Storages smaller than this come from the allocator every time.
pub const MIN_BYTES: usize = 4 << 10;
/// The most bytes kept in storages nothing else holds.
pub const MAX_IDLE_BYTES: usize = 256 << 20;

/// The kept storages.
#[derive(Default)]
pub struct Recycler {
    kept: RefCell<Vec<Bytes>>,
}

/// True when only the keeper holds `b`.
fn idle(b: &Bytes) -> bool {
    Rc::strong_count(b) == 1 && Rc::weak_count(b) == 0
}

impl Recycler {
    /// A zero-filled storage of `n` bytes.
    pub fn zeroed(&self, n: usize) -> Bytes {
        self.storage(n, true)
    }

    /// A storage of `n` bytes, zero-filled when `zero` (else a reused one keeps the
    /// bytes it had).
    pub fn storage(&self, n: usize, zero: bool) -> Bytes {
        if n < MIN_BYTES {
            return crate::value::shared_bytes(crate::hugepage::zeroed(n));
        }
        let mut kept = self.kept.borrow_mut();
        if let Some(b) = kept.iter().find(|b| idle(b) && b.borrow().len() == n) {
            if zero {
                b.borrow_mut().fill(0);
            }
            return b.clone();
        }
        // Make room: drop idle storages, oldest first, until the new one fits the cap.
        let mut idle_bytes: usize = kept.iter().filter(|b| idle(b)).map(|b| b.borrow().len()).sum();
        kept.retain(|b| {
            if idle_bytes + n > MAX_IDLE_BYTES && idle(b) {
                idle_bytes -= b.borrow().len();
                false
            } else {
                true
            }
        });
        let b: Bytes = crate::value::shared_bytes(crate::hugepage::zeroed(n));
        kept.push(b.clone());
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storages_come_back_zeroed_once_dropped() {
        let r = Recycler::default();
        let a = r.zeroed(MIN_BYTES);
        a.borrow_mut()[5] = 7;
        let p = Rc::as_ptr(&a);
        // Still held: a second storage.
        let b = r.zeroed(MIN_BYTES);
        assert_ne!(Rc::as_ptr(&b), p);
        drop(a);
        let c = r.zeroed(MIN_BYTES);
        assert_eq!(Rc::as_ptr(&c), p);
        assert!(c.borrow().iter().all(|&x| x == 0));
        // Small storages are not kept.
        let s = r.zeroed(16);
        assert_eq!(Rc::strong_count(&s), 1);
    }
}
