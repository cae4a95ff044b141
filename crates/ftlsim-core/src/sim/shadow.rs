//! The read oracle's memory: the newest token of every logical page, and whether it was trimmed since, in 4
//! bytes a page (with the chip's 11-byte page records, what keeps the simulator under 16 bytes a physical
//! page). An entry holds a token's low 31 bits; from the first token that needs more (after 2,147,483,647
//! host writes) the rest of every page's token is kept beside the entries, in as few bits a page as the
//! widest token so far needs (2, 4, 8, 16 or 32: a quarter of a byte a page up to 8,589,934,591 host
//! writes), so the check is exact at any length of run and the oracle's memory stays flat.

use super::TRIMMED;
use crate::addr::Token;
use crate::high_bits::HighBits;
use crate::sparse::SparseVec;

/// An entry's bit for "trimmed since the token was written".
const TRIMMED_BIT: u32 = 1 << 31;

/// The token bits an entry holds.
const LOW_BITS: u32 = 31;

/// Per logical page, the token a read must return (0: never written), with [`TRIMMED`] set when the page
/// was trimmed since: the oracle's values, as [`Shadow::get`] and [`Shadow::set`] take and give them.
pub(super) struct Shadow {
    entries: SparseVec<u32>,
    /// Each page's token bits past the entry's 31.
    high: HighBits,
}

impl Shadow {
    /// `pages` logical pages, none written.
    pub(super) fn new(pages: usize) -> Shadow {
        Shadow {
            entries: SparseVec::new(pages, 0),
            high: HighBits::default(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    #[inline]
    pub(super) fn get(&self, lpn: usize) -> Token {
        let entry = self.entries.get(lpn);
        let token = (entry & !TRIMMED_BIT) as Token | self.high.get(lpn) << LOW_BITS;
        if entry & TRIMMED_BIT != 0 {
            token | TRIMMED
        } else {
            token
        }
    }

    #[inline]
    pub(super) fn set(&mut self, lpn: usize, value: Token) {
        let token = value & !TRIMMED;
        let high = token >> LOW_BITS;
        if !self.high.holds(high) {
            self.high.widen(high, self.entries.len());
        }
        self.high.set(lpn, high);
        let trimmed = if value & TRIMMED != 0 { TRIMMED_BIT } else { 0 };
        self.entries.set(lpn, token as u32 & !TRIMMED_BIT | trimmed);
    }

    /// How many pages from `lpn` on were never written nor trimmed, known at once: the rest of an untouched
    /// chunk of entries ([`SparseVec::untouched_from`]), else 0.
    #[inline]
    pub(super) fn unwritten_from(&self, lpn: usize) -> usize {
        self.entries.untouched_from(lpn)
    }

    /// A hint: entry `lpn` is about to be read or set (see [`SparseVec::prefetch`]).
    #[inline]
    pub(super) fn prefetch(&self, lpn: usize) {
        self.entries.prefetch(lpn);
    }

    /// Bytes of host memory the oracle holds now.
    pub(super) fn heap_bytes(&self) -> usize {
        self.entries.heap_bytes() + self.high.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_of_every_width_come_back_exactly_with_their_trim_mark() {
        let mut shadow = Shadow::new(40);
        assert_eq!(shadow.get(0), 0);
        let edge = 1 << LOW_BITS;
        for token in [
            1,
            edge - 1,
            edge,
            edge + 1,
            u32::MAX as Token,
            1 << 40,
            1 << 47,
            TRIMMED - 1,
        ] {
            shadow.set(1, token);
            assert_eq!(shadow.get(1), token);
            shadow.set(1, token | TRIMMED);
            assert_eq!(shadow.get(1), token | TRIMMED);
        }
        // Back to a narrow token (a power cut keeps the older write).
        shadow.set(1, 7);
        assert_eq!(shadow.get(1), 7);
        shadow.set(2, 1 << 33);
        shadow.set(3, 5);
        assert_eq!((shadow.get(2), shadow.get(3)), (1 << 33, 5));
        // The chunk table's one place, 40 entries (a chunk cut to them) and 40 fields of 32 bits.
        assert_eq!(shadow.heap_bytes(), 16 + 40 * 4 + 40 * 4);
    }

    /// Every widening (2, 4, 8, 16, 32 bits a page) keeps every page's token, its neighbours' in the same
    /// word too, and costs what its width says.
    #[test]
    fn widening_keeps_every_page_s_token() {
        let pages = 100;
        let mut shadow = Shadow::new(pages);
        let mut written = vec![0; pages];
        let mut write = |shadow: &mut Shadow, lpn: usize, token: Token| {
            shadow.set(lpn, token);
            written[lpn] = token;
            for (lpn, &token) in written.iter().enumerate() {
                assert_eq!(shadow.get(lpn), token, "page {lpn}");
            }
        };
        for lpn in 0..pages {
            write(&mut shadow, lpn, lpn as Token + 1);
        }
        assert_eq!(shadow.high.heap_bytes(), 0);
        for (bits, lpn) in [(2, 10), (4, 20), (8, 30), (16, 40), (32, 50)] {
            // The widest token of `bits` past the entry's, one in the word's next field and a narrow one
            // after them, all kept through the widenings that follow.
            let token: Token = (1 << (LOW_BITS + bits)) - 1;
            write(&mut shadow, lpn, token);
            assert_eq!(shadow.high.bits(), bits);
            assert_eq!(
                shadow.high.heap_bytes(),
                pages.div_ceil(32 / bits as usize) * 4
            );
            write(&mut shadow, lpn + 1, token - 1);
            write(&mut shadow, lpn + 2, 3 | TRIMMED);
        }
    }
}
