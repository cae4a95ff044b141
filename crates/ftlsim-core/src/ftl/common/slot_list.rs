//! A fixed-capacity intrusive doubly linked list over slot indices `0..capacity`: links in two vectors, no
//! allocation after construction. The owner keeps what a slot holds; the list only orders slots, front
//! (newest) to back (oldest). The recency order of `Lru`, `LocationCache` and the NVRAM write cache.

const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct SlotList {
    prev: Vec<u32>,
    next: Vec<u32>,
    head: u32,
    tail: u32,
}

impl SlotList {
    /// An empty list for the slots `0..capacity`.
    pub fn new(capacity: usize) -> SlotList {
        SlotList {
            prev: vec![NONE; capacity],
            next: vec![NONE; capacity],
            head: NONE,
            tail: NONE,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.head == NONE
    }

    /// The newest slot.
    pub fn front(&self) -> Option<u32> {
        (self.head != NONE).then_some(self.head)
    }

    /// The oldest slot.
    pub fn back(&self) -> Option<u32> {
        (self.tail != NONE).then_some(self.tail)
    }

    /// Links an unlinked `slot` in as the newest.
    pub fn push_front(&mut self, slot: u32) {
        self.prev[slot as usize] = NONE;
        self.next[slot as usize] = self.head;
        if self.head != NONE {
            self.prev[self.head as usize] = slot;
        } else {
            self.tail = slot;
        }
        self.head = slot;
    }

    /// Takes a linked `slot` out of the list.
    pub fn unlink(&mut self, slot: u32) {
        let (p, n) = (self.prev[slot as usize], self.next[slot as usize]);
        if p != NONE {
            self.next[p as usize] = n;
        } else {
            self.head = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        } else {
            self.tail = p;
        }
    }

    /// Makes a linked `slot` the newest.
    pub fn move_to_front(&mut self, slot: u32) {
        if self.head != slot {
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
        if p != NONE {
            self.next[p as usize] = to;
        } else {
            self.head = to;
        }
        if n != NONE {
            self.prev[n as usize] = to;
        } else {
            self.tail = to;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(l: &SlotList) -> Vec<u32> {
        let mut out = Vec::new();
        let mut s = l.head;
        while s != NONE {
            out.push(s);
            s = l.next[s as usize];
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
