//! Bad blocks (TinyFTL paper §V.D: blocks that go bad, factory bad blocks and blocks whose
//! erase count passes a threshold, are replaced from reserved blocks). ftlsim manages them in one layer
//! between every scheme and the chip, as NAND controllers do below their FTL: a scheme sees
//! `physical_blocks` good blocks and never a bad one; behind them the chip has a reserve of
//! `bad_block_reserve` more.
//!
//! - **Factory bad blocks** (`bad_block_ratio` of the chip's blocks, at positions drawn from
//!   `bad_block_seed`) carry the manufacturer's marker in their first spare area. At format the layer gives
//!   the scheme's blocks, in order, the first good chip blocks; the good blocks after them are the reserve.
//! - **Grown bad blocks**: an erase of a block already erased `endurance` times fails; the block keeps its
//!   pages (its data stays readable) and gets a marker numbering the failure (one counted spare program,
//!   written with the failed erase: a cut cannot fall between them). The scheme's block is remapped to the
//!   next reserve block, which is erased, so the scheme's erase succeeds as far as it can tell. When the
//!   reserve is empty the run ends with [`crate::device::FlashError::WornOut`].
//! - **Mount**: the remap table is RAM and is lost at a power cut. It is rebuilt from the markers alone (one
//!   counted spare read per chip block): the format's mapping, then each grown failure in its number's order
//!   takes the next reserve block, exactly as it did when it happened.

use crate::addr::Pbn;
/// The options are configuration (`config.rs`); this layer applies them.
pub use crate::config::BadBlockOptions;
use crate::nand::FACTORY_BAD;
use std::collections::VecDeque;

/// Where each of the scheme's blocks lives on the chip, and the reserve not yet given out.
#[derive(Clone, Debug)]
pub struct BadBlockMap {
    chip_of: Vec<u32>,
    reserve: VecDeque<u32>,
    pub reserve_blocks: u32,
    pub factory: u32,
    pub grown: u32,
}

impl BadBlockMap {
    /// The reserve's chip blocks not yet given out.
    pub fn unused_reserve(&self) -> impl Iterator<Item = u32> + '_ {
        self.reserve.iter().copied()
    }

    /// The map of `blocks` scheme blocks over a chip whose blocks carry `markers` (0 good, [`FACTORY_BAD`],
    /// or a grown failure's number); Err with the number of good blocks when they are fewer than `blocks` (the
    /// configuration's reserve is checked, and explained, by [`crate::device::Device::with_bad_blocks`]).
    pub fn from_markers(blocks: u32, markers: &[u32]) -> Result<BadBlockMap, u32> {
        let chip_blocks = markers.len() as u32;
        let good: Vec<u32> = (0..chip_blocks)
            .filter(|&b| markers[b as usize] != FACTORY_BAD)
            .collect();
        let factory = chip_blocks - good.len() as u32;
        if (good.len() as u32) < blocks {
            return Err(good.len() as u32);
        }
        let mut map = BadBlockMap {
            chip_of: good[..blocks as usize].to_vec(),
            reserve: good[blocks as usize..].iter().copied().collect(),
            reserve_blocks: chip_blocks - blocks,
            factory,
            grown: 0,
        };
        let mut grown: Vec<(u32, u32)> = (0..chip_blocks)
            .filter(|&b| !matches!(markers[b as usize], 0 | FACTORY_BAD))
            .map(|b| (markers[b as usize], b))
            .collect();
        grown.sort_unstable();
        for (number, chip_block) in grown {
            let pbn = map
                .chip_of
                .iter()
                .position(|&c| c == chip_block)
                .expect("a grown bad block was in use when it failed");
            map.replace(Pbn(pbn as u32))
                .expect("every failure found a replacement when it happened");
            debug_assert_eq!(map.grown, number);
        }
        Ok(map)
    }

    /// The chip block behind the scheme's block `pbn`.
    #[inline]
    pub fn chip_block(&self, pbn: Pbn) -> Pbn {
        Pbn(self.chip_of[pbn.index()])
    }

    /// The scheme's block `pbn` went bad: it moves to the next reserve block, returned; None when the reserve
    /// is used up.
    pub fn replace(&mut self, pbn: Pbn) -> Option<Pbn> {
        let to = self.reserve.pop_front()?;
        self.grown += 1;
        self.chip_of[pbn.index()] = to;
        Some(Pbn(to))
    }
}

/// `count` distinct blocks of `0..chip_blocks`, drawn from `seed` (splitmix64, partial Fisher-Yates over a
/// sparse swap list, so the cost follows `count` rather than the chip).
pub fn factory_positions(chip_blocks: u32, count: u32, seed: u64) -> Vec<u32> {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut swapped = std::collections::BTreeMap::new();
    (0..count)
        .map(|i| {
            let j = i + (next() % (chip_blocks - i) as u64) as u32;
            let at_j = *swapped.get(&j).unwrap_or(&j);
            let at_i = *swapped.get(&i).unwrap_or(&i);
            swapped.insert(j, at_i);
            at_j
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_skips_factory_bad_blocks_and_keeps_the_rest_in_reserve() {
        // Chip blocks 1 and 4 are bad: the scheme's 4 blocks are chip 0, 2, 3, 5; 6 and 7 are the reserve.
        let markers = [0, FACTORY_BAD, 0, 0, FACTORY_BAD, 0, 0, 0];
        let mut map = BadBlockMap::from_markers(4, &markers).unwrap();
        let chip: Vec<u32> = (0..4).map(|b| map.chip_block(Pbn(b)).0).collect();
        assert_eq!(chip, [0, 2, 3, 5]);
        assert_eq!((map.factory, map.reserve_blocks), (2, 4));
        assert_eq!(map.replace(Pbn(2)), Some(Pbn(6)));
        assert_eq!(map.replace(Pbn(2)), Some(Pbn(7)));
        assert_eq!(map.replace(Pbn(0)), None);
    }

    #[test]
    fn the_map_is_rebuilt_from_markers_in_the_order_blocks_failed() {
        // Scheme block 2 (chip 3) failed first and went to chip 6; then its replacement failed and went to
        // chip 7: the markers say 3 -> #1, 6 -> #2.
        let markers = [0, FACTORY_BAD, 0, 1, FACTORY_BAD, 0, 2, 0, 0];
        let map = BadBlockMap::from_markers(4, &markers).unwrap();
        let chip: Vec<u32> = (0..4).map(|b| map.chip_block(Pbn(b)).0).collect();
        assert_eq!(chip, [0, 2, 7, 5]);
        assert_eq!((map.grown, map.reserve.len()), (2, 1));
    }

    #[test]
    fn markers_that_leave_too_few_good_blocks_give_how_many_are_good() {
        let e = BadBlockMap::from_markers(3, &[FACTORY_BAD, 0, FACTORY_BAD, 0]).unwrap_err();
        assert_eq!(e, 2);
    }

    #[test]
    fn factory_positions_are_distinct_and_seeded() {
        let a = factory_positions(1000, 100, 7);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 100);
        assert!(sorted.iter().all(|&b| b < 1000));
        assert_eq!(a, factory_positions(1000, 100, 7));
        assert_ne!(a, factory_positions(1000, 100, 8));
        assert_eq!(factory_positions(5, 5, 1).len(), 5);
    }

    #[test]
    fn the_default_reserve_covers_the_factory_share_and_two_percent() {
        // 1,000 blocks, 2% factory bad, endurance set: r >= 0.02 (1000 + r) + 20.
        let r = BadBlockOptions::default_reserve(1000, 0.02, Some(10));
        let o = BadBlockOptions {
            ratio: 0.02,
            endurance: Some(10),
            reserve: r,
            seed: 1,
        };
        assert!(r - o.factory_count(1000 + r) >= 20, "{r}");
        assert_eq!(BadBlockOptions::default_reserve(1000, 0.0, None), 0);
    }
}
