//! A fixed-capacity LRU set over dense keys (`0..keys`), with its recency order in a [`SlotList`] and a
//! key -> slot index: no hashing and no allocation after construction. Each slot carries a
//! dirty bit so that a write-back cache (TinyFTL's block table cache) knows what an eviction must write.
//! The key type says what is cached: `Lru<Lbn>` for TinyFTL's log-block list (logical blocks with a log
//! block), `Lru` (keys `u32`) for the map caches, keyed by a map table's number in the scheme's table area
//! (TinyFTL's block table cache and page mapping cache, Superblock's page-map cache; `map_area.rs`).

use crate::addr::{Niche, Opt};
use crate::ftl::common::structures::bitmap::Bitmap;
use crate::ftl::common::structures::slot_list::SlotList;

#[derive(Clone, Debug)]
pub struct Lru<K: Niche = u32> {
    slot_of: Vec<Opt<u32>>,
    /// Key of each slot `0..len` (slots past `len` hold stale keys, never read).
    key_of: Vec<K>,
    /// Dirty bit of each slot; the bits of slots past `len` are clear.
    dirty: Bitmap,
    /// Slots from the most to the least recently used.
    order: SlotList,
    len: u32,
}

impl<K: Niche> Lru<K> {
    /// An empty set holding at most `capacity` (>= 1) of the keys `0..keys`.
    pub fn new(capacity: u32, keys: u32) -> Lru<K> {
        let c = capacity.max(1) as usize;
        Lru {
            slot_of: vec![Opt::NONE; keys as usize],
            key_of: vec![K::from_raw(0); c],
            dirty: Bitmap::new(c),
            order: SlotList::new(c),
            len: 0,
        }
    }

    pub fn capacity(&self) -> u32 {
        self.key_of.len() as u32
    }

    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn is_full(&self) -> bool {
        self.len == self.capacity()
    }

    #[inline]
    fn at(key: K) -> usize {
        key.to_raw() as usize
    }

    pub fn contains(&self, key: K) -> bool {
        self.slot_of[Self::at(key)].is_some()
    }

    /// The least recently used key.
    pub fn lru(&self) -> Option<K> {
        self.order.back().map(|slot| self.key_of[slot as usize])
    }

    /// A hit makes `key` the most recently used and returns true; a miss changes nothing.
    pub fn touch(&mut self, key: K) -> bool {
        let Some(slot) = self.slot_of[Self::at(key)].get() else {
            return false;
        };
        self.order.move_to_front(slot);
        true
    }

    /// Inserts an absent `key` as the most recently used (clean). When the set is full the least recently
    /// used key is evicted first and returned with its dirty bit.
    pub fn insert(&mut self, key: K) -> Option<(K, bool)> {
        debug_assert!(!self.contains(key));
        let mut evicted = None;
        let slot = if self.is_full() {
            let slot = self
                .order
                .back()
                .expect("a full set has a least recently used slot");
            let old = self.key_of[slot as usize];
            evicted = Some((old, self.dirty.get(slot as usize)));
            self.order.unlink(slot);
            self.slot_of[Self::at(old)] = Opt::NONE;
            self.len -= 1;
            slot
        } else {
            self.len
        };
        self.key_of[slot as usize] = key;
        self.dirty.clear(slot as usize);
        self.slot_of[Self::at(key)] = Opt::some(slot);
        self.order.push_front(slot);
        self.len += 1;
        evicted
    }

    /// Removes `key` if present; returns whether it was dirty. The freed slot is reused by the next insert.
    pub fn remove(&mut self, key: K) -> Option<bool> {
        let slot = self.slot_of[Self::at(key)].take()?;
        let dirty = self.dirty.get(slot as usize);
        self.order.unlink(slot);
        self.len -= 1;
        // Keep slots 0..len in use: move the last used slot into the hole.
        let last = self.len;
        if slot != last {
            let moved = self.key_of[last as usize];
            self.key_of[slot as usize] = moved;
            self.dirty
                .assign(slot as usize, self.dirty.get(last as usize));
            self.order.replace(last, slot);
            self.slot_of[Self::at(moved)] = Opt::some(slot);
        }
        self.dirty.clear(last as usize);
        Some(dirty)
    }

    pub fn set_dirty(&mut self, key: K) {
        let slot = self.slot_of[Self::at(key)]
            .get()
            .expect("set_dirty of a key not in the set");
        self.dirty.set(slot as usize);
    }

    pub fn has_dirty(&self) -> bool {
        self.dirty.iter_ones().next().is_some()
    }

    /// The dirty keys in increasing order, which become clean (the caller writes them back).
    pub fn take_dirty(&mut self, out: &mut Vec<K>)
    where
        K: Ord,
    {
        out.clear();
        out.extend(self.dirty.iter_ones().map(|slot| self.key_of[slot]));
        self.dirty.clear_all();
        out.sort_unstable();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::Lbn;

    #[test]
    fn evicts_the_least_recently_used_with_its_dirty_bit() {
        let mut c: Lru = Lru::new(3, 10);
        assert_eq!(c.insert(1), None);
        assert_eq!(c.insert(2), None);
        assert_eq!(c.insert(3), None);
        assert!(c.touch(1));
        c.set_dirty(2);
        assert!(!c.touch(7));
        assert_eq!(c.lru(), Some(2));
        assert_eq!(c.insert(4), Some((2, true)));
        assert_eq!(c.insert(5), Some((3, false)));
        assert!(c.contains(1) && c.contains(4) && c.contains(5) && !c.contains(2));
    }

    #[test]
    fn logical_block_keys_come_back_as_logical_blocks() {
        // TinyFTL's log-block list: two log blocks, logical block 5 touched last, so 9 goes first.
        let mut c: Lru<Lbn> = Lru::new(2, 10);
        c.insert(Lbn(9));
        c.insert(Lbn(5));
        assert!(c.touch(Lbn(5)));
        assert_eq!(c.lru(), Some(Lbn(9)));
        assert_eq!(c.insert(Lbn(0)), Some((Lbn(9), false)));
        assert_eq!(c.remove(Lbn(5)), Some(false));
        assert!(c.contains(Lbn(0)) && !c.contains(Lbn(9)));
    }

    #[test]
    fn remove_keeps_the_order_of_the_rest() {
        let mut c: Lru = Lru::new(4, 10);
        for k in [1, 2, 3, 4] {
            c.insert(k);
        }
        c.set_dirty(4);
        assert_eq!(c.remove(1), Some(false));
        assert_eq!(c.remove(9), None);
        assert_eq!(c.len(), 3);
        assert_eq!(c.lru(), Some(2));
        c.insert(6);
        assert_eq!(c.insert(7), Some((2, false)));
        assert_eq!(c.insert(8), Some((3, false)));
        let mut d = Vec::new();
        c.take_dirty(&mut d);
        assert_eq!(d, vec![4]);
        assert_eq!(c.insert(9), Some((4, false)));
    }

    #[test]
    fn a_dirty_bit_follows_its_key_when_remove_moves_it_and_leaves_with_it() {
        // Slots 0, 1, 2 hold keys 1, 2, 3; key 3 is dirty. Removing key 1 moves key 3 into slot 0 with its
        // bit, and slot 2 is taken by key 4, clean.
        let mut c: Lru = Lru::new(3, 10);
        for k in [1, 2, 3] {
            c.insert(k);
        }
        c.set_dirty(3);
        assert_eq!(c.remove(1), Some(false));
        c.insert(4);
        let mut d = Vec::new();
        c.take_dirty(&mut d);
        assert_eq!(d, vec![3]);
        assert!(!c.has_dirty());
        // Key 4 in the last slot is dirty; removing it leaves nothing dirty behind.
        c.set_dirty(4);
        assert!(c.has_dirty());
        assert_eq!(c.remove(4), Some(true));
        assert!(!c.has_dirty());
        c.take_dirty(&mut d);
        assert_eq!(d, Vec::<u32>::new());
    }
}
