//! Blocks bucketed by their count of valid pages, so that a greedy victim (fewest valid pages) is found in
//! O(1) and a page invalidation costs O(1): intrusive doubly linked lists, one per count.

use crate::addr::Opt;

#[derive(Clone, Debug)]
pub struct ValidBuckets {
    heads: Vec<Opt<u32>>,
    next: Vec<Opt<u32>>,
    prev: Vec<Opt<u32>>,
    /// Bucket of each block, none when the block is not a candidate (free or being written).
    bucket: Vec<Opt<u32>>,
    lowest: usize,
}

impl ValidBuckets {
    pub fn new(blocks: u32, pages_per_block: u32) -> ValidBuckets {
        ValidBuckets {
            heads: vec![Opt::NONE; pages_per_block as usize + 1],
            next: vec![Opt::NONE; blocks as usize],
            prev: vec![Opt::NONE; blocks as usize],
            bucket: vec![Opt::NONE; blocks as usize],
            lowest: 0,
        }
    }

    pub fn contains(&self, block: u32) -> bool {
        self.bucket[block as usize].is_some()
    }

    /// Makes `block` a candidate with `valid` valid pages.
    pub fn insert(&mut self, block: u32, valid: u32) {
        debug_assert!(!self.contains(block));
        let head = self.heads[valid as usize];
        self.next[block as usize] = head;
        self.prev[block as usize] = Opt::NONE;
        if let Some(h) = head.get() {
            self.prev[h as usize] = Opt::some(block);
        }
        self.heads[valid as usize] = Opt::some(block);
        self.bucket[block as usize] = Opt::some(valid);
        self.lowest = self.lowest.min(valid as usize);
    }

    /// Stops considering `block`; returns the count it had.
    pub fn remove(&mut self, block: u32) -> u32 {
        let b = block as usize;
        let valid = self.bucket[b]
            .take()
            .expect("remove of a block that is not a candidate");
        let (n, p) = (self.next[b], self.prev[b]);
        match p.get() {
            Some(p) => self.next[p as usize] = n,
            None => self.heads[valid as usize] = n,
        }
        if let Some(n) = n.get() {
            self.prev[n as usize] = p;
        }
        valid
    }

    /// One page of a candidate block became invalid.
    pub fn decrement(&mut self, block: u32) {
        let valid = self.remove(block);
        self.insert(block, valid - 1);
    }

    /// The candidate `pop_min` would take, left in place.
    pub fn min(&self) -> Option<(u32, u32)> {
        (self.lowest..self.heads.len()).find_map(|c| self.heads[c].get().map(|b| (b, c as u32)))
    }

    /// Takes the candidate with the fewest valid pages: (block, valid pages).
    pub fn pop_min(&mut self) -> Option<(u32, u32)> {
        while self.lowest < self.heads.len() {
            if let Some(head) = self.heads[self.lowest].get() {
                let valid = self.remove(head);
                return Some((head, valid));
            }
            self.lowest += 1;
        }
        None
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
}
