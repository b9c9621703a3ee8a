//! Typed-index arenas for the IR, in the manner of `cranelift-entity`.
//!
//! * An **entity handle** is a `u32` newtype (made with [`entity_impl!`]) that stores
//!   `index + 1` in a `NonZeroU32`, so `Option<Handle>` costs nothing.
//! * [`PrimaryMap`] owns the data of its entities and hands out new handles.
//! * [`SecondaryMap`] is a side table keyed by the handles of some primary map; entries that
//!   were never written read as the map's default value.
//! * [`UniqueArena`] interns values: pushing a value equal to one already present returns
//!   the existing handle, so structural equality becomes handle equality.
//! * [`EntityList`] / [`ListPool`]: variable-length lists of handles stored in a pool
//!   ([`list`]), so IR nodes with many operands stay small `Copy`-able values.
//!
//! Nothing here knows about the IR; the IR crate declares its handles with the macro.

use std::hash::Hash;
use std::marker::PhantomData;

use indexmap::IndexSet;

pub mod list;
pub use list::{EntityList, ListPool};

/// A typed index into an arena.
pub trait EntityRef: Copy + Eq + Ord + Hash {
    /// The handle of the `index`-th entity.
    fn new(index: usize) -> Self;
    /// The position of the entity in its arena.
    fn index(self) -> usize;
}

/// Declares an entity handle: `entity_impl!(Expr, "expr")` gives a `NonZeroU32` newtype
/// whose `Debug` prints `expr12`.
#[macro_export]
macro_rules! entity_impl {
    ($(#[$attr:meta])* $name:ident, $prefix:expr) => {
        $(#[$attr])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(::core::num::NonZeroU32);

        impl $crate::EntityRef for $name {
            #[inline]
            fn new(index: usize) -> Self {
                let raw = u32::try_from(index + 1).expect("entity index overflows u32");
                $name(::core::num::NonZeroU32::new(raw).expect("index + 1 is never zero"))
            }
            #[inline]
            fn index(self) -> usize {
                (self.0.get() - 1) as usize
            }
        }

        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                write!(f, "{}{}", $prefix, $crate::EntityRef::index(*self))
            }
        }
    };
}

/// An arena that owns the data of its entities, indexed by handle `K`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PrimaryMap<K: EntityRef, V> {
    elems: Vec<V>,
    unused: PhantomData<K>,
}

impl<K: EntityRef, V> Default for PrimaryMap<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: EntityRef, V> PrimaryMap<K, V> {
    /// An empty arena.
    pub fn new() -> Self {
        Self { elems: Vec::new(), unused: PhantomData }
    }
    /// Adds a value and returns its handle.
    pub fn push(&mut self, v: V) -> K {
        let k = K::new(self.elems.len());
        self.elems.push(v);
        k
    }
    /// The handle the next `push` will return.
    pub fn next_key(&self) -> K {
        K::new(self.elems.len())
    }
    /// Number of entities.
    pub fn len(&self) -> usize {
        self.elems.len()
    }
    /// True when the arena holds nothing.
    pub fn is_empty(&self) -> bool {
        self.elems.is_empty()
    }
    /// True when `k` names an entity of this arena.
    pub fn is_valid(&self, k: K) -> bool {
        k.index() < self.elems.len()
    }
    /// The value of `k`, or `None` when `k` is out of range.
    pub fn get(&self, k: K) -> Option<&V> {
        self.elems.get(k.index())
    }
    /// The value of `k` for writing, or `None` when `k` is out of range.
    pub fn get_mut(&mut self, k: K) -> Option<&mut V> {
        self.elems.get_mut(k.index())
    }
    /// Handles in creation order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = K> + ExactSizeIterator + use<K, V> {
        (0..self.elems.len()).map(K::new)
    }
    /// Values in creation order.
    pub fn values(&self) -> std::slice::Iter<'_, V> {
        self.elems.iter()
    }
    /// Values in creation order, for writing.
    pub fn values_mut(&mut self) -> std::slice::IterMut<'_, V> {
        self.elems.iter_mut()
    }
    /// `(handle, value)` pairs in creation order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (K, &V)> + ExactSizeIterator {
        self.elems.iter().enumerate().map(|(i, v)| (K::new(i), v))
    }
    /// `(handle, value)` pairs in creation order, for writing.
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (K, &mut V)> + ExactSizeIterator {
        self.elems.iter_mut().enumerate().map(|(i, v)| (K::new(i), v))
    }
}

impl<K: EntityRef, V> std::ops::Index<K> for PrimaryMap<K, V> {
    type Output = V;
    fn index(&self, k: K) -> &V {
        &self.elems[k.index()]
    }
}

impl<K: EntityRef, V> std::ops::IndexMut<K> for PrimaryMap<K, V> {
    fn index_mut(&mut self, k: K) -> &mut V {
        &mut self.elems[k.index()]
    }
}

impl<K: EntityRef + std::fmt::Debug, V: std::fmt::Debug> std::fmt::Debug for PrimaryMap<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// A side table keyed by the handles of a primary map. Reading an entry that was never
/// written gives the default value.
#[derive(Clone)]
pub struct SecondaryMap<K: EntityRef, V: Clone> {
    elems: Vec<V>,
    default: V,
    unused: PhantomData<K>,
}

impl<K: EntityRef, V: Clone + Default> Default for SecondaryMap<K, V> {
    fn default() -> Self {
        Self::with_default(V::default())
    }
}

impl<K: EntityRef, V: Clone + Default> SecondaryMap<K, V> {
    /// An empty table whose default is `V::default()`.
    pub fn new() -> Self {
        Self::default()
    }
}

impl<K: EntityRef, V: Clone> SecondaryMap<K, V> {
    /// An empty table with an explicit default value.
    pub fn with_default(default: V) -> Self {
        Self { elems: Vec::new(), default, unused: PhantomData }
    }
    /// The value of `k` (the default when never written).
    pub fn get(&self, k: K) -> &V {
        self.elems.get(k.index()).unwrap_or(&self.default)
    }
    /// Writes the value of `k`.
    pub fn set(&mut self, k: K, v: V) {
        let i = k.index();
        if i >= self.elems.len() {
            self.elems.resize(i + 1, self.default.clone());
        }
        self.elems[i] = v;
    }
    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.elems.clear();
    }
}

impl<K: EntityRef, V: Clone> std::ops::Index<K> for SecondaryMap<K, V> {
    type Output = V;
    fn index(&self, k: K) -> &V {
        self.get(k)
    }
}

impl<K: EntityRef, V: Clone> std::ops::IndexMut<K> for SecondaryMap<K, V> {
    /// The entry of `k` for writing; the table grows (with default values) to hold it.
    fn index_mut(&mut self, k: K) -> &mut V {
        let i = k.index();
        if i >= self.elems.len() {
            self.elems.resize(i + 1, self.default.clone());
        }
        &mut self.elems[i]
    }
}

impl<K: EntityRef + std::fmt::Debug, V: Clone + std::fmt::Debug> std::fmt::Debug for SecondaryMap<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.elems.iter().enumerate().map(|(i, v)| (K::new(i), v))).finish()
    }
}

/// An interning arena: equal values share one handle. Each value is stored once, in an
/// insertion-ordered hash set (as naga's `UniqueArena`).
#[derive(Clone)]
pub struct UniqueArena<K: EntityRef, V: Clone + Eq + Hash> {
    set: IndexSet<V>,
    unused: PhantomData<K>,
}

impl<K: EntityRef, V: Clone + Eq + Hash> Default for UniqueArena<K, V> {
    fn default() -> Self {
        Self { set: IndexSet::new(), unused: PhantomData }
    }
}

impl<K: EntityRef, V: Clone + Eq + Hash> UniqueArena<K, V> {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }
    /// Interns `v`: the handle of an equal value already present, or a new one.
    pub fn intern(&mut self, v: V) -> K {
        K::new(self.set.insert_full(v).0)
    }
    /// The handle of a value equal to `v`, if one was interned.
    pub fn lookup(&self, v: &V) -> Option<K> {
        self.set.get_index_of(v).map(K::new)
    }
    /// Number of distinct values.
    pub fn len(&self) -> usize {
        self.set.len()
    }
    /// True when nothing was interned.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
    /// True when `k` names a value of this arena.
    pub fn is_valid(&self, k: K) -> bool {
        k.index() < self.set.len()
    }
    /// The value of `k`, or `None` when out of range.
    pub fn get(&self, k: K) -> Option<&V> {
        self.set.get_index(k.index())
    }
    /// `(handle, value)` pairs in interning order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (K, &V)> + ExactSizeIterator {
        self.set.iter().enumerate().map(|(i, v)| (K::new(i), v))
    }
}

impl<K: EntityRef, V: Clone + Eq + Hash> std::ops::Index<K> for UniqueArena<K, V> {
    type Output = V;
    fn index(&self, k: K) -> &V {
        &self.set[k.index()]
    }
}

impl<K: EntityRef + std::fmt::Debug, V: Clone + Eq + Hash + std::fmt::Debug> std::fmt::Debug for UniqueArena<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    entity_impl!(
        /// A test handle.
        Thing,
        "thing"
    );

    #[test]
    fn primary_map_hands_out_dense_handles() {
        let mut m: PrimaryMap<Thing, &str> = PrimaryMap::new();
        let a = m.push("a");
        let b = m.push("b");
        assert_eq!(a.index(), 0);
        assert_eq!(b.index(), 1);
        assert_eq!(m[b], "b");
        assert_eq!(format!("{a:?}"), "thing0");
        assert_eq!(std::mem::size_of::<Option<Thing>>(), 4);
        assert!(m.get(Thing::new(7)).is_none());
    }

    #[test]
    fn secondary_map_reads_default() {
        let mut s: SecondaryMap<Thing, u32> = SecondaryMap::with_default(9);
        s.set(Thing::new(3), 1);
        assert_eq!(s[Thing::new(0)], 9);
        assert_eq!(s[Thing::new(3)], 1);
        assert_eq!(s[Thing::new(100)], 9);
    }

    #[test]
    fn unique_arena_interns() {
        let mut u: UniqueArena<Thing, String> = UniqueArena::new();
        let a = u.intern("x".to_string());
        let b = u.intern("y".to_string());
        let c = u.intern("x".to_string());
        assert_eq!(a, c);
        assert_ne!(a, b);
        assert_eq!(u.len(), 2);
    }
}
