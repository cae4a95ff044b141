//! PSU FlashSim's age-based replacement (the DiskSim-based simulator of the DFTL authors, `ssd_interface.c`),
//! as a recency order over slot indices `0..capacity` for DFTL's cached mapping table.
//!
//! Every entry carries an age. The table has a hot segment ("real") and a cold one ("ghost", a fifth of the
//! entries; PSU hard-codes 6,552 + 1,640 of 8,192):
//! ```text
//! insert:   hot full -> its lowest age moves to the cold segment; age := top + 1, top := age; into hot
//! hit hot:  age += 1; top := max(top, age)
//! hit cold: age += 1; if age >= the lowest hot age, the two swap segments
//! victim:   (table full) the lowest age of the cold segment (of the hot one if the cold has no room)
//! ```
//! `top` is the age of PSU's `real_max`, the youngest hot entry. An age counts both recency (a new entry
//! starts above every hot one) and frequency (each hit adds one), so an entry hit often outlives newer ones.
//! Where PSU scans its arrays and takes the last of equal ages (an order of array positions), this takes
//! the lowest slot; PSU also lets `real_max` name a demoted entry, which a hit in the cold segment then
//! raises: here `top` follows hot hits only. Each segment is an indexed binary min-heap of (age, slot), so
//! every operation is O(log n) with no allocation after construction (PSU scans the table on every miss).

use crate::ftl::common::structures::bitmap::Bitmap;

#[derive(Clone, Debug)]
pub struct AgeOrder {
    age: Vec<u64>,
    /// Each linked slot's index in its segment's heap.
    at: Vec<u32>,
    cold: Bitmap,
    hot_heap: Vec<u32>,
    cold_heap: Vec<u32>,
    hot_cap: usize,
    top: u64,
}

impl AgeOrder {
    /// An empty order for slots `0..capacity`, a fifth of them (rounded down) in the cold segment.
    pub fn new(capacity: usize) -> AgeOrder {
        let cold_cap = capacity / 5;
        AgeOrder {
            age: vec![0; capacity],
            at: vec![0; capacity],
            cold: Bitmap::new(capacity),
            hot_heap: Vec::with_capacity(capacity - cold_cap),
            cold_heap: Vec::with_capacity(cold_cap),
            hot_cap: capacity - cold_cap,
            top: 0,
        }
    }

    /// The entry to evict from a full table.
    pub fn victim(&self) -> u32 {
        *self
            .cold_heap
            .first()
            .or(self.hot_heap.first())
            .expect("a full table has entries")
    }

    /// A hit on linked `slot` (see the module doc).
    pub fn touch(&mut self, slot: u32) {
        let s = slot as usize;
        self.age[s] += 1;
        if !self.cold.get(s) {
            self.top = self.top.max(self.age[s]);
            let i = self.at[s] as usize;
            sift_down(&mut self.hot_heap, &mut self.at, &self.age, i);
            return;
        }
        let i = self.at[s] as usize;
        sift_down(&mut self.cold_heap, &mut self.at, &self.age, i);
        if let Some(&coldest_hot) = self.hot_heap.first() {
            if self.age[s] >= self.age[coldest_hot as usize] {
                self.unlink(slot);
                self.unlink(coldest_hot);
                self.link(coldest_hot, true);
                self.link(slot, false);
            }
        }
    }

    /// Unlinks `slot` (an evicted entry).
    pub fn remove(&mut self, slot: u32) {
        self.unlink(slot);
    }

    /// Links a new entry in `slot` (unlinked), the youngest of the hot segment.
    pub fn insert(&mut self, slot: u32) {
        if self.hot_heap.len() == self.hot_cap {
            let coldest_hot = self.hot_heap[0];
            self.unlink(coldest_hot);
            self.link(coldest_hot, true);
        }
        self.top += 1;
        self.age[slot as usize] = self.top;
        self.link(slot, false);
    }

    fn link(&mut self, slot: u32, cold: bool) {
        let s = slot as usize;
        self.cold.assign(s, cold);
        let heap = if cold {
            &mut self.cold_heap
        } else {
            &mut self.hot_heap
        };
        let i = heap.len();
        heap.push(slot);
        self.at[s] = i as u32;
        sift_up(heap, &mut self.at, &self.age, i);
    }

    fn unlink(&mut self, slot: u32) {
        let s = slot as usize;
        let heap = if self.cold.get(s) {
            &mut self.cold_heap
        } else {
            &mut self.hot_heap
        };
        let i = self.at[s] as usize;
        let last = heap.pop().expect("a linked slot is in its heap");
        if last != slot {
            heap[i] = last;
            self.at[last as usize] = i as u32;
            sift_down(heap, &mut self.at, &self.age, i);
            let j = self.at[last as usize] as usize;
            sift_up(heap, &mut self.at, &self.age, j);
        }
    }
}

/// Heap order: the lower age first, the lower slot on a tie.
#[inline]
fn before(age: &[u64], a: u32, b: u32) -> bool {
    (age[a as usize], a) < (age[b as usize], b)
}

fn sift_up(heap: &mut [u32], at: &mut [u32], age: &[u64], mut i: usize) {
    while i > 0 {
        let parent = (i - 1) / 2;
        if !before(age, heap[i], heap[parent]) {
            break;
        }
        heap.swap(i, parent);
        at[heap[i] as usize] = i as u32;
        at[heap[parent] as usize] = parent as u32;
        i = parent;
    }
}

fn sift_down(heap: &mut [u32], at: &mut [u32], age: &[u64], mut i: usize) {
    loop {
        let (l, r) = (2 * i + 1, 2 * i + 2);
        let mut first = i;
        if l < heap.len() && before(age, heap[l], heap[first]) {
            first = l;
        }
        if r < heap.len() && before(age, heap[r], heap[first]) {
            first = r;
        }
        if first == i {
            return;
        }
        heap.swap(i, first);
        at[heap[i] as usize] = i as u32;
        at[heap[first] as usize] = first as u32;
        i = first;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frequently_hit_entry_outlives_newer_ones_and_the_cold_segment_is_evicted_first() {
        // 5 slots: 4 hot, 1 cold.
        let mut order = AgeOrder::new(5);
        for slot in 0..4 {
            order.insert(slot); // ages 1, 2, 3, 4
        }
        for _ in 0..4 {
            order.touch(0); // age 5, then 6, 7, 8: top 8
        }
        order.insert(4); // hot full: slot 1 (age 2) goes cold; slot 4 age 9
        assert_eq!(order.victim(), 1);
        order.touch(1); // cold hit: age 3 >= the lowest hot (slot 2, age 3): they swap
        assert_eq!(order.victim(), 2);
        order.remove(2);
        order.insert(2); // hot full: slot 1 (age 3) goes cold again; slot 2 age 10
        assert_eq!(order.victim(), 1);
        order.remove(1);
        order.insert(1); // hot full: slot 3 (age 4) goes cold; slot 1 age 11. Slot 0 (age 8) stays hot.
        assert_eq!(order.victim(), 3);
    }

    #[test]
    fn without_a_cold_segment_the_lowest_hot_age_is_evicted() {
        let mut order = AgeOrder::new(2); // 2 hot, 0 cold
        order.insert(0);
        order.insert(1);
        order.touch(0);
        order.touch(0); // slot 0 age 3, slot 1 age 2
        assert_eq!(order.victim(), 1);
    }
}
