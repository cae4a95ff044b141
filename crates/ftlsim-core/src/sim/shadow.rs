//! The read oracle's memory: the newest token of every logical page, and whether it was trimmed since, in 4
//! bytes a page (with the chip's 11-byte page records, what keeps the simulator under 16 bytes a physical
//! page). An entry holds a token up to 31 bits itself; a wider one (after 2,147,483,646 host writes) is kept
//! whole in a map beside the entries, so the check is exact at any length of run.

use super::TRIMMED;
use crate::addr::Token;
use crate::sparse::SparseVec;
use std::collections::BTreeMap;

/// An entry's bit for "trimmed since the token was written".
const TRIMMED_BIT: u32 = 1 << 31;

/// An entry's token bits when the token is in the map of wide tokens.
const WIDE: u32 = TRIMMED_BIT - 1;

/// Bytes a wide token's entry costs in its map, estimated: the key and the token, and as much again for the
/// tree's nodes.
const WIDE_ENTRY_BYTES: usize = 2 * (4 + 8);

/// Per logical page, the token a read must return (0: never written), with [`TRIMMED`] set when the page
/// was trimmed since: the oracle's values, as [`Shadow::get`] and [`Shadow::set`] take and give them.
pub(super) struct Shadow {
    entries: SparseVec<u32>,
    wide: BTreeMap<u32, Token>,
}

impl Shadow {
    /// `pages` logical pages, none written.
    pub(super) fn new(pages: usize) -> Shadow {
        Shadow {
            entries: SparseVec::new(pages, 0),
            wide: BTreeMap::new(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    #[inline]
    pub(super) fn get(&self, lpn: usize) -> Token {
        let entry = self.entries.get(lpn);
        let token = match entry & !TRIMMED_BIT {
            WIDE => self.wide_token(lpn),
            narrow => narrow as Token,
        };
        if entry & TRIMMED_BIT != 0 {
            token | TRIMMED
        } else {
            token
        }
    }

    #[cold]
    #[inline(never)]
    fn wide_token(&self, lpn: usize) -> Token {
        *self
            .wide
            .get(&(lpn as u32))
            .expect("an entry marked wide has its token in the map")
    }

    #[inline]
    pub(super) fn set(&mut self, lpn: usize, value: Token) {
        let token = value & !TRIMMED;
        let bits = match u32::try_from(token) {
            Ok(narrow) if narrow < WIDE => {
                if !self.wide.is_empty() {
                    // A power cut may take a page back to an older, narrow token.
                    self.wide.remove(&(lpn as u32));
                }
                narrow
            }
            _ => {
                self.wide.insert(lpn as u32, token);
                WIDE
            }
        };
        let trimmed = if value & TRIMMED != 0 { TRIMMED_BIT } else { 0 };
        self.entries.set(lpn, bits | trimmed);
    }

    /// A hint: entry `lpn` is about to be read or set (see [`SparseVec::prefetch`]).
    #[inline]
    pub(super) fn prefetch(&self, lpn: usize) {
        self.entries.prefetch(lpn);
    }

    /// Bytes of host memory the oracle holds now.
    pub(super) fn heap_bytes(&self) -> usize {
        self.entries.heap_bytes() + self.wide.len() * WIDE_ENTRY_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_of_every_width_come_back_exactly_with_their_trim_mark() {
        let mut shadow = Shadow::new(4);
        assert_eq!(shadow.get(0), 0);
        let edge = WIDE as Token;
        for token in [
            1,
            edge - 1,
            edge,
            edge + 1,
            u32::MAX as Token,
            1 << 40,
            TRIMMED - 1,
        ] {
            shadow.set(1, token);
            assert_eq!(shadow.get(1), token);
            shadow.set(1, token | TRIMMED);
            assert_eq!(shadow.get(1), token | TRIMMED);
        }
        // Back to a narrow token (a power cut keeps the older write): the wide one is forgotten.
        shadow.set(1, 7);
        assert_eq!((shadow.get(1), shadow.wide.len()), (7, 0));
        shadow.set(2, 1 << 33);
        shadow.set(3, 5);
        assert_eq!((shadow.get(2), shadow.get(3)), (1 << 33, 5));
        assert_eq!(shadow.heap_bytes(), 16 + 4 * 4 + WIDE_ENTRY_BYTES);
    }
}
