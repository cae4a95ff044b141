//! A fixed-capacity intrusive doubly linked list over slot indices `0..capacity`: links in two vectors, no
//! allocation after construction. The owner keeps what a slot holds; the list only orders slots, front
//! (newest) to back (oldest). The recency order of `Lru`, `LocationCache` and the NVRAM write cache.

use crate::addr::Opt;

#[derive(Clone, Debug)]
pub struct SlotList {
    prev: Vec<Opt<u32>>,
    next: Vec<Opt<u32>>,
    head: Opt<u32>,
    tail: Opt<u32>,
}

impl SlotList {
    /// An empty list for the slots `0..capacity`.
    pub fn new(capacity: usize) -> SlotList {
        SlotList {
            prev: vec![Opt::NONE; capacity],
            next: vec![Opt::NONE; capacity],
            head: Opt::NONE,
            tail: Opt::NONE,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    /// The newest slot.
    pub fn front(&self) -> Option<u32> {
        self.head.get()
    }

    /// The oldest slot.
    pub fn back(&self) -> Option<u32> {
        self.tail.get()
    }

    /// Links an unlinked `slot` in as the newest.
    pub fn push_front(&mut self, slot: u32) {
        self.prev[slot as usize] = Opt::NONE;
        self.next[slot as usize] = self.head;
        match self.head.get() {
            Some(h) => self.prev[h as usize] = Opt::some(slot),
            None => self.tail = Opt::some(slot),
        }
        self.head = Opt::some(slot);
    }

    /// Takes a linked `slot` out of the list.
    pub fn unlink(&mut self, slot: u32) {
        let (p, n) = (self.prev[slot as usize], self.next[slot as usize]);
        match p.get() {
            Some(p) => self.next[p as usize] = n,
            None => self.head = n,
        }
        match n.get() {
            Some(n) => self.prev[n as usize] = p,
            None => self.tail = p,
        }
    }

    /// Makes a linked `slot` the newest.
    pub fn move_to_front(&mut self, slot: u32) {
        if self.head != Opt::some(slot) {
            self.unlink(slot);
            self.push_front(slot);
        }
    }

    /// Puts the unlinked slot `to` where the linked slot `from` stands (`from` leaves the list): for an owner
    /// that keeps its used slots dense by moving its last one into a hole.
    pub fn replace(&mut self, from: u32, to: u32) {
        let (p, n) = (self.prev[from as usize], self.next[from as usize]);
        self.prev[to as usize] = p;
        self.next[to as usize] = n;
        match p.get() {
            Some(p) => self.next[p as usize] = Opt::some(to),
            None => self.head = Opt::some(to),
        }
        match n.get() {
            Some(n) => self.prev[n as usize] = Opt::some(to),
            None => self.tail = Opt::some(to),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(l: &SlotList) -> Vec<u32> {
        let mut out = Vec::new();
        let mut s = l.head.get();
        while let Some(slot) = s {
            out.push(slot);
            s = l.next[slot as usize].get();
        }
        out
    }

    #[test]
    fn push_unlink_move_and_replace_keep_both_directions_linked() {
        let mut l = SlotList::new(5);
        assert!(l.is_empty() && l.front().is_none() && l.back().is_none());
        for s in [0, 1, 2, 3] {
            l.push_front(s);
        }
        assert_eq!(order(&l), vec![3, 2, 1, 0]);
        l.move_to_front(1);
        l.move_to_front(1);
        assert_eq!(order(&l), vec![1, 3, 2, 0]);
        l.unlink(0);
        assert_eq!((l.front(), l.back()), (Some(1), Some(2)));
        l.replace(3, 4);
        assert_eq!(order(&l), vec![1, 4, 2]);
        l.replace(2, 0);
        assert_eq!((order(&l), l.back()), (vec![1, 4, 0], Some(0)));
        for s in [1, 4, 0] {
            l.unlink(s);
        }
        assert!(l.is_empty() && l.back().is_none());
    }
}
