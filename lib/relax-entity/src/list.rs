//! Lists of entity handles stored in a shared pool, as Cranelift's `EntityList` and
//! `ListPool` (its `dfg.value_lists`).
//!
//! An [`EntityList`] is a small `Copy` handle (start and length) into a [`ListPool`] owned
//! by the same function as the entities, so a node that holds a variable number of
//! operands (call arguments, tuple fields) stays a fixed-size value without a `Vec` of
//! its own. Lists are appended to the pool and never freed individually: a list that
//! grows past the end of the pool moves to the end, leaving its old slots unused, which
//! is cheap for IR that is rebuilt by passes rather than edited in place.
//!
//! A list read through [`ListPool::get`] is checked (`None` when the handle is out of
//! range, which the verifier reports); [`EntityList::as_slice`] panics on a bad handle,
//! as indexing a map does.

use std::marker::PhantomData;

use crate::EntityRef;

/// A list of `T` handles in a [`ListPool`].
pub struct EntityList<T: EntityRef> {
    start: u32,
    len: u32,
    unused: PhantomData<T>,
}

// Derives would bound `T` itself; the handle is plain data whatever `T` is.
impl<T: EntityRef> Clone for EntityList<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: EntityRef> Copy for EntityList<T> {}
impl<T: EntityRef> PartialEq for EntityList<T> {
    fn eq(&self, o: &Self) -> bool {
        (self.start, self.len) == (o.start, o.len)
    }
}
impl<T: EntityRef> Eq for EntityList<T> {}
impl<T: EntityRef> std::hash::Hash for EntityList<T> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (self.start, self.len).hash(h);
    }
}
impl<T: EntityRef> Default for EntityList<T> {
    fn default() -> Self {
        EntityList { start: 0, len: 0, unused: PhantomData }
    }
}
impl<T: EntityRef> std::fmt::Debug for EntityList<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "list[{}..+{}]", self.start, self.len)
    }
}

/// The storage of the lists of one function.
#[derive(Clone)]
pub struct ListPool<T: EntityRef> {
    data: Vec<T>,
}

impl<T: EntityRef> Default for ListPool<T> {
    fn default() -> Self {
        ListPool { data: Vec::new() }
    }
}

impl<T: EntityRef + std::fmt::Debug> std::fmt::Debug for ListPool<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.data.iter()).finish()
    }
}

impl<T: EntityRef> ListPool<T> {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }
    /// A new list holding `items`.
    pub fn alloc(&mut self, items: impl IntoIterator<Item = T>) -> EntityList<T> {
        let start = self.data.len();
        self.data.extend(items);
        self.make(start, self.data.len() - start)
    }
    fn make(&self, start: usize, len: usize) -> EntityList<T> {
        let start = u32::try_from(start).expect("list pool overflows u32");
        let len = u32::try_from(len).expect("list overflows u32");
        EntityList { start, len, unused: PhantomData }
    }
    /// The items of `l`, or `None` when the handle does not lie within the pool.
    pub fn get(&self, l: EntityList<T>) -> Option<&[T]> {
        let (s, n) = (l.start as usize, l.len as usize);
        self.data.get(s..s.checked_add(n)?)
    }
    /// Number of slots in use (including those of lists that moved).
    pub fn capacity_used(&self) -> usize {
        self.data.len()
    }
}

impl<T: EntityRef> EntityList<T> {
    /// The empty list (valid in every pool).
    pub fn new() -> Self {
        Self::default()
    }
    /// Number of items.
    pub fn len(self) -> usize {
        self.len as usize
    }
    /// True when the list has no items.
    pub fn is_empty(self) -> bool {
        self.len == 0
    }
    /// The items. Panics when the handle does not belong to `pool`.
    pub fn as_slice(self, pool: &ListPool<T>) -> &[T] {
        pool.get(self).expect("a list handle of this pool")
    }
    /// The items, for writing in place. Panics when the handle does not belong to `pool`.
    pub fn as_mut_slice(self, pool: &mut ListPool<T>) -> &mut [T] {
        let (s, n) = (self.start as usize, self.len as usize);
        &mut pool.data[s..s + n]
    }
    /// The `i`-th item, if any.
    pub fn get(self, i: usize, pool: &ListPool<T>) -> Option<T> {
        pool.get(self)?.get(i).copied()
    }
    /// The first item, if any.
    pub fn first(self, pool: &ListPool<T>) -> Option<T> {
        self.get(0, pool)
    }
    /// Appends an item: in place when the list ends the pool, else by moving it there.
    pub fn push(&mut self, x: T, pool: &mut ListPool<T>) {
        let (s, n) = (self.start as usize, self.len as usize);
        if s + n != pool.data.len() {
            let items: Vec<T> = pool.data[s..s + n].to_vec();
            *self = pool.alloc(items);
        }
        pool.data.push(x);
        self.len += 1;
    }
    /// Replaces the items with `items` (reusing the slots when they fit).
    pub fn set(&mut self, items: &[T], pool: &mut ListPool<T>) {
        if items.len() <= self.len as usize {
            let s = self.start as usize;
            pool.data[s..s + items.len()].copy_from_slice(items);
            self.len = items.len() as u32;
        } else {
            *self = pool.alloc(items.iter().copied());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::entity_impl!(
        /// A test handle.
        Item,
        "item"
    );

    #[test]
    fn lists_share_a_pool() {
        let mut pool: ListPool<Item> = ListPool::new();
        let a = pool.alloc([Item::new(1), Item::new(2)]);
        let mut b = pool.alloc([Item::new(3)]);
        assert_eq!(a.as_slice(&pool), &[Item::new(1), Item::new(2)]);
        b.push(Item::new(4), &mut pool);
        assert_eq!(b.as_slice(&pool), &[Item::new(3), Item::new(4)]);
        let mut a2 = a;
        a2.push(Item::new(5), &mut pool);
        // `a` moved to the end; the old handle still reads the old items.
        assert_eq!(a2.as_slice(&pool), &[Item::new(1), Item::new(2), Item::new(5)]);
        assert_eq!(a.as_slice(&pool), &[Item::new(1), Item::new(2)]);
        a2.set(&[Item::new(9)], &mut pool);
        assert_eq!(a2.as_slice(&pool), &[Item::new(9)]);
        assert!(EntityList::<Item>::new().as_slice(&pool).is_empty());
    }

    #[test]
    fn bad_handles_read_as_none() {
        let mut pool: ListPool<Item> = ListPool::new();
        let a = pool.alloc([Item::new(1), Item::new(2)]);
        let other: ListPool<Item> = ListPool::new();
        assert!(other.get(a).is_none());
        assert_eq!(a.get(5, &pool), None);
    }
}
