//! RAM of the Logblock FTL (BAST) and of Logblock with zone switching, as the TinyFTL paper counts them
//! (§VI.B, Table IV), for its 16 GB MLC device: 65,536 blocks of 128 pages of 2 KB.
//!
//! - Logblock: "Each block mapping entry requires 2 bytes ... Therefore the Logblock FTL requires 128 KB"
//!   (65,536 entries: the map spans every block of the chip, data and non-data), plus "another 150,912
//!   bytes for 393 log blocks". 150,912 / 393 = 384 B a log block; the paper gives no layout, so we derive
//!   one that yields it: the log block's page map, one entry per page (128) of 3 B, a chip page address
//!   (8,388,608 pages need 23 bits). Total 131,072 + 150,912 = 281,984.
//! - Logblock-zoned: "we set the zone size to 6,144 blocks so that the block mapping information of each
//!   zone occupies almost the same memory size as in TinyFTL": 6,144 entries x 2 B = 12,288, the whole of
//!   Table IV's figure. The paper's figure has no log-block page maps in it, so none is counted here
//!   (with them it would be 163,200 B); the lead may decide to report them apart.
//!
//! The chip's block count is the TinyFTL layout, 24 non-data blocks in every 1,024 ([`paper_chip_blocks`]):
//! 64,000 host blocks make a chip of 65,536.

use crate::ftl::{address_bytes, RamItem};

/// Blocks of a chip whose host-visible blocks are `logical_blocks` when 24 of every 1,024 blocks are
/// reserved for log, map and bad-block use (TinyFTL §V.E): 64,000 -> 65,536.
pub fn paper_chip_blocks(logical_blocks: u32) -> u32 {
    (logical_blocks as u64 * 1024).div_ceil(1000) as u32
}

/// Logblock (BAST) RAM: the block map over every block of a chip of `chip_blocks`, and a page map per log
/// block of `pages_per_block` entries, each a chip page address.
pub fn logblock_ram(pages_per_block: u32, log_blocks: u32, chip_blocks: u32) -> Vec<RamItem> {
    let chip_blocks = chip_blocks as u64;
    let block_entry = address_bytes(chip_blocks);
    let page_entry = address_bytes(chip_blocks * pages_per_block as u64);
    let per_log = pages_per_block as u64 * page_entry;
    vec![
        RamItem::new(
            "block_map",
            chip_blocks * block_entry,
            format!(
                "{chip_blocks} chip blocks x {block_entry} B physical block number (TinyFTL paper §VI.B: \
                 the map spans every block of the chip)"
            ),
        ),
        RamItem::new(
            "log_page_maps",
            log_blocks as u64 * per_log,
            format!(
                "{log_blocks} log blocks x {pages_per_block} pages x {page_entry} B chip page address (layout \
                 derived: the paper gives 150,912 B for 393 log blocks, 384 B each)"
            ),
        ),
    ]
}

/// Logblock-zoned RAM: the block map of the one zone of `zone_blocks` blocks in RAM (TinyFTL paper §VI.B).
pub fn zoned_ram(zone_blocks: u32, chip_blocks: u32) -> Vec<RamItem> {
    let entry = address_bytes(chip_blocks as u64);
    vec![RamItem::new(
        "zone_block_map",
        zone_blocks as u64 * entry,
        format!("{zone_blocks} blocks of the loaded zone x {entry} B physical block number (Table IV's figure)"),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Geometry;

    fn tinyftl_16g() -> Geometry {
        Geometry {
            page_bytes: 2048,
            spare_bytes: 64,
            pages_per_block: 128,
            logical_blocks: 64_000,
            sequential_program: true,
        }
    }

    #[test]
    fn table_iv_logblock_and_logblock_zoned() {
        let g = tinyftl_16g();
        assert_eq!(paper_chip_blocks(64_000), 65_536);
        let lb = logblock_ram(g.pages_per_block, 393, paper_chip_blocks(g.logical_blocks));
        // 65,536 x 2 B + 393 x 128 x 3 B = 131,072 + 150,912 = 281,984 (Table IV).
        assert_eq!(
            lb.iter().map(|i| i.bytes).collect::<Vec<_>>(),
            vec![131_072, 150_912]
        );
        assert_eq!(lb.iter().map(|i| i.bytes).sum::<u64>(), 281_984);
        // 6,144 x 2 B = 12,288 (Table IV).
        assert_eq!(zoned_ram(6_144, 65_536)[0].bytes, 12_288);
    }
}
