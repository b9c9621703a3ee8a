//! Simulated device memory: each allocation is a host byte vector at a device address.
//!
//! Addresses grow monotonically from [`GLOBAL_BASE`], each allocation aligned to 256
//! bytes and followed by an unmapped gap of [`GAP`] bytes, and are never reused, so
//! an access past the end of an allocation, into freed memory or through a stray
//! pointer finds no allocation and is reported instead of landing in other data. The
//! generic address space puts shared memory at [`SHARED_WINDOW`] and local memory at
//! [`LOCAL_WINDOW`] (each [`WINDOW_SIZE`] bytes), below which global addresses stay.

/// The first global address handed out.
pub const GLOBAL_BASE: u64 = 0x0000_0002_0000_0000;
/// The unmapped bytes after each allocation.
pub const GAP: u64 = 64 * 1024;
/// Where shared memory appears in generic addresses.
pub const SHARED_WINDOW: u64 = 0x0000_7000_0000_0000;
/// Where local memory appears in generic addresses.
pub const LOCAL_WINDOW: u64 = 0x0000_7100_0000_0000;
/// The size of the shared and local windows.
pub const WINDOW_SIZE: u64 = 1 << 32;
/// How much memory the simulated device has.
pub const DEVICE_BYTES: u64 = 4 << 30;

/// One allocation.
#[derive(Debug)]
pub struct Region {
    /// Its device address.
    pub base: u64,
    /// Its contents.
    pub data: Vec<u8>,
    /// Who owns it (a context, or a module's variables), for freeing in bulk.
    pub owner: u64,
}

/// Why a memory operation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemError {
    /// No room left (or a size that cannot be allocated).
    OutOfMemory(u64),
    /// A zero-byte allocation.
    ZeroSize,
    /// The bytes are not all inside one live allocation.
    OutOfBounds {
        /// The first byte.
        addr: u64,
        /// How many bytes.
        len: u64,
    },
    /// The address is not the start of a live allocation.
    NotAllocated(u64),
}

impl std::fmt::Display for MemError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MemError::OutOfMemory(n) => {
                write!(f, "cannot allocate {n} bytes (the simulated device has {DEVICE_BYTES} bytes)")
            }
            MemError::ZeroSize => f.write_str("cannot allocate 0 bytes"),
            MemError::OutOfBounds { addr, len } => {
                write!(f, "{len} bytes at 0x{addr:x} are not inside one allocation")
            }
            MemError::NotAllocated(a) => write!(f, "0x{a:x} is not the start of an allocation"),
        }
    }
}

/// All device memory.
#[derive(Debug)]
pub struct DeviceMemory {
    /// The live allocations, sorted by address (new ones have the highest).
    regions: Vec<Region>,
    next: u64,
    used: u64,
}

impl Default for DeviceMemory {
    fn default() -> Self {
        Self::new()
    }
}

impl DeviceMemory {
    /// Empty memory.
    pub const fn new() -> Self {
        DeviceMemory { regions: Vec::new(), next: GLOBAL_BASE, used: 0 }
    }

    /// Allocates `size` zeroed bytes for `owner`.
    pub fn alloc(&mut self, size: u64, owner: u64) -> Result<u64, MemError> {
        if size == 0 {
            return Err(MemError::ZeroSize);
        }
        let base = self.next;
        let end = base.checked_add(size).and_then(|e| e.checked_add(GAP)).map(|e| e.next_multiple_of(256));
        match end {
            Some(end) if end <= SHARED_WINDOW && self.used.saturating_add(size) <= DEVICE_BYTES => {
                self.regions.push(Region { base, data: vec![0u8; size as usize], owner });
                self.next = end;
                self.used += size;
                Ok(base)
            }
            _ => Err(MemError::OutOfMemory(size)),
        }
    }

    /// Frees the allocation that starts at `addr`.
    pub fn free(&mut self, addr: u64) -> Result<(), MemError> {
        match self.regions.binary_search_by_key(&addr, |r| r.base) {
            Ok(i) => {
                let r = self.regions.remove(i);
                self.used -= r.data.len() as u64;
                Ok(())
            }
            Err(_) => Err(MemError::NotAllocated(addr)),
        }
    }

    /// Frees every allocation of `owner`.
    pub fn free_owned(&mut self, owner: u64) {
        let mut used = self.used;
        self.regions.retain(|r| {
            let keep = r.owner != owner;
            if !keep {
                used -= r.data.len() as u64;
            }
            keep
        });
        self.used = used;
    }

    /// The index of the allocation holding `len` bytes at `addr`; `hint` is the last
    /// one found (checked first) and is updated.
    #[inline]
    pub(crate) fn find(&self, addr: u64, len: u64, hint: &mut usize) -> Option<usize> {
        let inside =
            |r: &Region| addr >= r.base && addr.checked_add(len).is_some_and(|e| e <= r.base + r.data.len() as u64);
        if let Some(r) = self.regions.get(*hint)
            && inside(r)
        {
            return Some(*hint);
        }
        let i = match self.regions.binary_search_by_key(&addr, |r| r.base) {
            Ok(i) => i,
            Err(0) => return None,
            Err(i) => i - 1,
        };
        if inside(&self.regions[i]) {
            *hint = i;
            Some(i)
        } else {
            None
        }
    }

    /// Allocation `i`.
    #[inline]
    pub(crate) fn region(&self, i: usize) -> &Region {
        &self.regions[i]
    }

    /// Allocation `i`, to write.
    #[inline]
    pub(crate) fn region_mut(&mut self, i: usize) -> &mut Region {
        &mut self.regions[i]
    }

    /// Copies `bytes` to device address `addr`.
    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<(), MemError> {
        let len = bytes.len() as u64;
        let i = self.find(addr, len, &mut 0).ok_or(MemError::OutOfBounds { addr, len })?;
        let r = &mut self.regions[i];
        let at = (addr - r.base) as usize;
        r.data[at..at + bytes.len()].copy_from_slice(bytes);
        Ok(())
    }

    /// Copies device memory at `addr` into `out`.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemError> {
        let len = out.len() as u64;
        let i = self.find(addr, len, &mut 0).ok_or(MemError::OutOfBounds { addr, len })?;
        let r = &self.regions[i];
        let at = (addr - r.base) as usize;
        out.copy_from_slice(&r.data[at..at + out.len()]);
        Ok(())
    }

    /// The owner of the allocation starting at `addr`.
    pub fn owner_of(&self, addr: u64) -> Option<u64> {
        self.regions.binary_search_by_key(&addr, |r| r.base).ok().map(|i| self.regions[i].owner)
    }

    /// The number of live allocations.
    pub fn len(&self) -> usize {
        self.regions.len()
    }

    /// No live allocation.
    pub fn is_empty(&self) -> bool {
        self.regions.is_empty()
    }
}
