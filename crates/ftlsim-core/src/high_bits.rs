//! The bits of a value past what its entry holds, beside the entries: a field of as few bits a place as the
//! widest value so far needs (2, 4, 8, 16 or 32), packed in 32-bit words, none kept (0 bits) while every
//! value fits its entry. The read oracle keeps its tokens' bits past 31 here (`sim/shadow.rs`), the chip its
//! page records' past 32 (`nand.rs`): runs past billions of host writes stay exact at a quarter of a byte a
//! place, where a map entry a value cost about 24.

/// The high bits of the values of a run of places (the oracle's logical pages, the chip's slab records).
#[derive(Default)]
pub(crate) struct HighBits {
    /// 0, 2, 4, 8, 16 or 32.
    bits: u32,
    /// Fields of `bits`, the first place in the low bits of a word.
    words: Vec<u32>,
}

impl HighBits {
    /// Bits a place: 0 while none are kept.
    #[inline(always)]
    pub(crate) fn bits(&self) -> u32 {
        self.bits
    }

    /// Whether a place's field can hold `high`.
    #[inline(always)]
    pub(crate) fn holds(&self, high: u64) -> bool {
        high >> self.bits == 0
    }

    /// The word and the shift of place `at`'s field.
    #[inline(always)]
    fn place(&self, at: usize) -> (usize, u32) {
        let per_word_log = 5 - self.bits.trailing_zeros();
        (
            at >> per_word_log,
            (at as u32 & ((1 << per_word_log) - 1)) * self.bits,
        )
    }

    #[inline(always)]
    fn mask(&self) -> u32 {
        ((1u64 << self.bits) - 1) as u32
    }

    /// Place `at`'s high bits (0 while none are kept).
    #[inline(always)]
    pub(crate) fn get(&self, at: usize) -> u64 {
        if self.bits == 0 {
            return 0;
        }
        let (word, shift) = self.place(at);
        ((self.words[word] >> shift) & self.mask()) as u64
    }

    /// Keeps `high` (one it [`HighBits::holds`]) for place `at`.
    #[inline(always)]
    pub(crate) fn set(&mut self, at: usize, high: u64) {
        if self.bits == 0 {
            return;
        }
        let (word, shift) = self.place(at);
        let mask = self.mask() << shift;
        let w = &mut self.words[word];
        *w = (*w & !mask) | ((high as u32) << shift & mask);
    }

    /// Place `to` gets place `from`'s high bits.
    #[inline(always)]
    pub(crate) fn copy(&mut self, from: usize, to: usize) {
        let high = self.get(from);
        self.set(to, high);
    }

    /// The places `run` hold 0.
    pub(crate) fn clear(&mut self, run: std::ops::Range<usize>) {
        if self.bits != 0 {
            run.for_each(|at| self.set(at, 0));
        }
    }

    /// Room for `places` places (those past the ones kept hold 0).
    pub(crate) fn grow_to(&mut self, places: usize) {
        if let Some(per_word) = 32u32.checked_div(self.bits) {
            let words = places.div_ceil(per_word as usize);
            if words > self.words.len() {
                self.words.resize(words, 0);
            }
        }
    }

    /// Fields wide enough for `high` (at most 32 bits), for `places` places, each keeping what it held.
    #[cold]
    #[inline(never)]
    pub(crate) fn widen(&mut self, high: u64, places: usize) {
        let bits = [2, 4, 8, 16, 32]
            .into_iter()
            .find(|&bits| high >> bits == 0)
            .expect("high bits of at most 32");
        let mut wider = HighBits {
            bits,
            words: Vec::new(),
        };
        wider.grow_to(places);
        (0..places).for_each(|at| wider.set(at, self.get(at)));
        *self = wider;
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.words.capacity() * std::mem::size_of::<u32>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every width's widest value comes back, beside its neighbours in the same word, through every widening
    /// that follows; growing and clearing keep the rest.
    #[test]
    fn every_width_keeps_every_place_s_bits_through_widening_growth_and_clearing() {
        let places = 70;
        let mut high = HighBits::default();
        let mut want = vec![0u64; places];
        assert!(high.holds(0) && !high.holds(1));
        high.set(3, 0);
        assert_eq!((high.get(3), high.heap_bytes()), (0, 0));
        for (bits, at) in [(2, 10), (4, 20), (8, 30), (16, 40), (32, 50)] {
            let widest = (1u64 << bits) - 1;
            assert!(!high.holds(widest));
            high.widen(widest, places);
            assert_eq!(
                (high.bits(), high.heap_bytes()),
                (bits, places.div_ceil(32 / bits as usize) * 4)
            );
            for (at, value) in [(at, widest), (at + 1, widest - 1), (at + 2, 1)] {
                high.set(at, value);
                want[at] = value;
            }
            for (at, &value) in want.iter().enumerate() {
                assert_eq!(high.get(at), value, "{bits} bits, place {at}");
            }
        }
        high.copy(50, 0);
        high.clear(20..23);
        high.grow_to(places + 5);
        (want[0], want[20], want[21], want[22]) = (want[50], 0, 0, 0);
        want.resize(places + 5, 0);
        for (at, &value) in want.iter().enumerate() {
            assert_eq!(high.get(at), value, "place {at}");
        }
    }
}
