//! One bit per page or block, in 64-bit words: the schemes' "written", "trimmed" and page-status bitmaps
//! (NFTL paper §3.2 technique 1; FAST paper §2.1's per-page state), one byte in RAM per eight entries as a
//! controller would keep them.

use std::ops::Range;

#[derive(Clone, Debug, Default)]
pub struct Bitmap {
    words: Vec<u64>,
    len: usize,
}

impl Bitmap {
    /// `len` bits, all clear.
    pub fn new(len: usize) -> Bitmap {
        Bitmap {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn get(&self, i: usize) -> bool {
        debug_assert!(i < self.len, "bit {i} of a bitmap of {}", self.len);
        self.words[i / 64] & (1 << (i % 64)) != 0
    }

    #[inline]
    pub fn set(&mut self, i: usize) {
        debug_assert!(i < self.len, "bit {i} of a bitmap of {}", self.len);
        self.words[i / 64] |= 1 << (i % 64);
    }

    /// A cache hint: bit `i` will be read or written soon.
    #[inline]
    pub fn prefetch(&self, i: usize) {
        crate::cache_hint::prefetch(self.words.as_ptr().wrapping_add(i / 64));
    }

    #[inline]
    pub fn clear(&mut self, i: usize) {
        debug_assert!(i < self.len, "bit {i} of a bitmap of {}", self.len);
        self.words[i / 64] &= !(1 << (i % 64));
    }

    #[inline]
    pub fn assign(&mut self, i: usize, on: bool) {
        if on {
            self.set(i)
        } else {
            self.clear(i)
        }
    }

    /// Sets bits `range`, a word at a time.
    pub fn set_range(&mut self, range: Range<usize>) {
        for (w, mask) in word_masks(range) {
            self.words[w] |= mask;
        }
    }

    /// Clears bits `range`, a word at a time.
    pub fn clear_range(&mut self, range: Range<usize>) {
        for (w, mask) in word_masks(range) {
            self.words[w] &= !mask;
        }
    }

    /// The set bits of `range` in increasing order, a word at a time.
    pub fn ones_in(&self, range: Range<usize>) -> impl Iterator<Item = usize> + '_ {
        word_masks(range).flat_map(|(w, mask)| {
            let mut rest = self.words[w] & mask;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    w * 64 + bit
                })
            })
        })
    }

    pub fn clear_all(&mut self) {
        self.words.fill(0);
    }

    pub fn count_ones(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The set bits in increasing order.
    pub fn iter_ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    w * 64 + bit
                })
            })
        })
    }

    /// The RAM a controller needs for it: one bit an entry, in bytes.
    pub fn ram_bytes(&self) -> u64 {
        (self.len as u64).div_ceil(8)
    }
}

/// The words bits `range` touch, each with the mask of the bits of `range` in it.
fn word_masks(range: Range<usize>) -> impl Iterator<Item = (usize, u64)> {
    let words = if range.is_empty() {
        0..0
    } else {
        range.start / 64..range.end.div_ceil(64)
    };
    words.map(move |w| {
        let (lo, hi) = (
            range.start.max(w * 64) - w * 64,
            range.end.min(w * 64 + 64) - w * 64,
        );
        // Bits lo..hi of the word (hi - lo is at least 1, and at most 64).
        (w, (u64::MAX >> (64 - (hi - lo))) << lo)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_clear_count_and_iterate_across_words() {
        let mut b = Bitmap::new(130);
        assert_eq!(b.len(), 130);
        assert_eq!(b.count_ones(), 0);
        for i in [0, 63, 64, 65, 129] {
            b.set(i);
        }
        assert!(b.get(63) && b.get(64) && !b.get(62) && !b.get(128));
        assert_eq!(b.count_ones(), 5);
        assert_eq!(b.iter_ones().collect::<Vec<_>>(), vec![0, 63, 64, 65, 129]);
        b.clear(64);
        b.assign(1, true);
        b.assign(65, false);
        assert_eq!(b.iter_ones().collect::<Vec<_>>(), vec![0, 1, 63, 129]);
        // 130 bits take 17 bytes on a controller, 3 words here.
        assert_eq!(b.ram_bytes(), 17);
        b.clear_all();
        assert_eq!(b.count_ones(), 0);
        assert_eq!(b.iter_ones().next(), None);
    }

    #[test]
    fn ranges_set_clear_and_list_bits_within_and_across_words() {
        let mut b = Bitmap::new(200);
        b.set_range(60..130);
        assert_eq!(b.count_ones(), 70);
        assert!(!b.get(59) && b.get(60) && b.get(129) && !b.get(130));
        b.clear_range(64..128);
        assert_eq!(
            b.iter_ones().collect::<Vec<_>>(),
            vec![60, 61, 62, 63, 128, 129]
        );
        assert_eq!(b.ones_in(62..129).collect::<Vec<_>>(), vec![62, 63, 128]);
        assert_eq!(b.ones_in(64..128).next(), None);
        // Empty ranges, and whole words.
        b.set_range(5..5);
        b.clear_range(61..61);
        assert_eq!(b.ones_in(70..70).count(), 0);
        assert_eq!(b.count_ones(), 6);
        b.set_range(0..192);
        assert_eq!(b.ones_in(0..200).count(), 192);
        b.clear_range(0..200);
        assert_eq!(b.count_ones(), 0);
    }

    #[test]
    fn an_empty_bitmap_has_no_bits() {
        let b = Bitmap::new(0);
        assert!(b.is_empty());
        assert_eq!(b.count_ones(), 0);
        assert_eq!(b.ram_bytes(), 0);
    }
}
