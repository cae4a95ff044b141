//! One bit per page or block, in 64-bit words: the schemes' "written", "trimmed" and page-status bitmaps
//! (NFTL paper §3.2 technique 1; FAST paper §2.1's per-page state), one byte in RAM per eight entries as a
//! controller would keep them.

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

    /// Sets the bits `range`, a word at a time.
    #[inline]
    pub fn set_range(&mut self, range: std::ops::Range<usize>) {
        self.update_range(range, |word, mask| *word |= mask);
    }

    /// Clears the bits `range`, a word at a time.
    #[inline]
    pub fn clear_range(&mut self, range: std::ops::Range<usize>) {
        self.update_range(range, |word, mask| *word &= !mask);
    }

    /// Applies `op` to each word that `range` touches, with the mask of its bits in the range.
    #[inline]
    fn update_range(&mut self, range: std::ops::Range<usize>, op: impl Fn(&mut u64, u64)) {
        debug_assert!(
            range.end <= self.len,
            "bits {range:?} of a bitmap of {}",
            self.len
        );
        let mut i = range.start;
        while i < range.end {
            let (word, bit) = (i / 64, i % 64);
            let n = (64 - bit).min(range.end - i);
            let mask = if n == 64 {
                u64::MAX
            } else {
                ((1u64 << n) - 1) << bit
            };
            op(&mut self.words[word], mask);
            i += n;
        }
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
    fn ranges_set_and_clear_exactly_their_bits_across_words() {
        let mut b = Bitmap::new(200);
        b.set_range(3..3);
        assert_eq!(b.count_ones(), 0);
        b.set_range(60..130);
        assert_eq!(
            b.iter_ones().collect::<Vec<_>>(),
            (60..130).collect::<Vec<_>>()
        );
        b.clear_range(64..128);
        assert_eq!(
            b.iter_ones().collect::<Vec<_>>(),
            vec![60, 61, 62, 63, 128, 129]
        );
        b.set_range(0..200);
        b.clear_range(1..199);
        assert_eq!(b.iter_ones().collect::<Vec<_>>(), vec![0, 199]);
    }

    #[test]
    fn an_empty_bitmap_has_no_bits() {
        let b = Bitmap::new(0);
        assert!(b.is_empty());
        assert_eq!(b.count_ones(), 0);
        assert_eq!(b.ram_bytes(), 0);
    }
}
