//! Blocks bucketed by their count of valid pages, so that a greedy victim (fewest valid pages) is found in
//! O(1) and a page invalidation costs O(1): intrusive doubly linked lists, one per count.

use crate::addr::Opt;

/// A block's links: its neighbours in its bucket's list and the bucket it is in, side by side so that an
/// update touches one cache line per block.
#[derive(Clone, Copy, Debug)]
struct Node {
    next: Opt<u32>,
    prev: Opt<u32>,
    /// None when the block is not a candidate (free or being written).
    bucket: Opt<u32>,
}

const UNLINKED: Node = Node {
    next: Opt::NONE,
    prev: Opt::NONE,
    bucket: Opt::NONE,
};

#[derive(Clone, Debug)]
pub struct ValidBuckets {
    heads: Vec<Opt<u32>>,
    nodes: Vec<Node>,
    /// The lowest bucket that holds a block (past the last when none does).
    lowest: usize,
}

impl ValidBuckets {
    pub fn new(blocks: u32, pages_per_block: u32) -> ValidBuckets {
        ValidBuckets {
            heads: vec![Opt::NONE; pages_per_block as usize + 1],
            nodes: vec![UNLINKED; blocks as usize],
            lowest: pages_per_block as usize + 1,
        }
    }

    #[inline]
    pub fn contains(&self, block: u32) -> bool {
        self.nodes[block as usize].bucket.is_some()
    }

    /// A cache hint: `block`'s links will be read or changed soon.
    #[inline]
    pub fn prefetch(&self, block: u32) {
        crate::cache_hint::prefetch(self.nodes.as_ptr().wrapping_add(block as usize));
    }

    /// Makes `block` a candidate with `valid` valid pages.
    #[inline]
    pub fn insert(&mut self, block: u32, valid: u32) {
        debug_assert!(!self.contains(block));
        let head = self.heads[valid as usize];
        self.nodes[block as usize] = Node {
            next: head,
            prev: Opt::NONE,
            bucket: Opt::some(valid),
        };
        if let Some(h) = head.get() {
            self.nodes[h as usize].prev = Opt::some(block);
        }
        self.heads[valid as usize] = Opt::some(block);
        self.lowest = self.lowest.min(valid as usize);
    }

    /// Stops considering `block`; returns the count it had.
    #[inline]
    pub fn remove(&mut self, block: u32) -> u32 {
        let valid = self.unlink(block);
        if valid as usize == self.lowest && self.heads[self.lowest].is_none() {
            self.raise_lowest();
        }
        valid
    }

    /// Takes `block` out of its bucket's list (`lowest` may then name an empty bucket: the caller fixes it);
    /// returns the bucket.
    #[inline]
    fn unlink(&mut self, block: u32) -> u32 {
        let node = std::mem::replace(&mut self.nodes[block as usize], UNLINKED);
        let valid = node
            .bucket
            .get()
            .expect("remove of a block that is not a candidate");
        match node.prev.get() {
            Some(p) => self.nodes[p as usize].next = node.next,
            None => self.heads[valid as usize] = node.next,
        }
        if let Some(n) = node.next.get() {
            self.nodes[n as usize].prev = node.prev;
        }
        valid
    }

    /// One page of a candidate block became invalid.
    #[inline]
    pub fn decrement(&mut self, block: u32) {
        let valid = self.unlink(block);
        self.insert(block, valid - 1);
    }

    /// The lowest bucket was emptied: moves `lowest` up to the next one that holds a block.
    fn raise_lowest(&mut self) {
        while self.lowest < self.heads.len() && self.heads[self.lowest].is_none() {
            self.lowest += 1;
        }
    }

    /// The candidate `pop_min` would take, left in place.
    pub fn min(&self) -> Option<(u32, u32)> {
        let head = self.heads.get(self.lowest)?.get()?;
        Some((head, self.lowest as u32))
    }

    /// Takes the candidate with the fewest valid pages: (block, valid pages).
    pub fn pop_min(&mut self) -> Option<(u32, u32)> {
        let (head, valid) = self.min()?;
        self.remove(head);
        Some((head, valid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_the_block_with_fewest_valid_pages() {
        let mut b = ValidBuckets::new(8, 4);
        b.insert(1, 4);
        b.insert(2, 3);
        b.insert(3, 4);
        b.decrement(3);
        b.decrement(3);
        assert_eq!(b.pop_min(), Some((3, 2)));
        assert_eq!(b.pop_min(), Some((2, 3)));
        b.insert(5, 0);
        assert_eq!(b.pop_min(), Some((5, 0)));
        assert_eq!(b.pop_min(), Some((1, 4)));
        assert_eq!(b.pop_min(), None);
    }

    #[test]
    fn the_minimum_follows_removals_and_decrements() {
        let mut b = ValidBuckets::new(8, 8);
        assert_eq!(b.min(), None);
        b.insert(1, 3);
        b.insert(2, 6);
        b.insert(4, 6);
        assert_eq!(b.min(), Some((1, 3)));
        // Emptying the lowest bucket moves the minimum up to the next bucket that holds a block.
        assert_eq!(b.remove(1), 3);
        assert_eq!(b.min(), Some((4, 6)));
        b.decrement(2);
        assert_eq!(b.min(), Some((2, 5)));
        assert_eq!(b.remove(2), 5);
        assert_eq!(b.remove(4), 6);
        assert_eq!(b.min(), None);
    }
}
