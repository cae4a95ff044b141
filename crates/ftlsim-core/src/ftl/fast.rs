//! `fast` and `ofast`: fully-associative sector translation (FAST paper, Lee et al. 2007, §3) and its lazy
//! merge variant O-FAST (§3.6). One SW log block takes sequential writes; `log_blocks - 1` RW log blocks are
//! shared by all logical blocks and filled in order.
//!
//! ```text
//! write(lpn): lbn, offset := lpn div N, lpn mod N                               (Fig. 6, Algorithm 1)
//!   the data block can take the page in place -> program it there
//!   offset = 0 (case 1):   SW full -> switch; SW partly written -> partial merge (Fig. 7a);
//!                          take a free block as the SW block for lbn; append the page
//!   SW belongs to lbn:     offset = SW pages (case 2.1)  -> append to SW
//!                          offset > SW pages (case 2.2)  -> partial merge of SW taking the page at its offset
//!                          offset < SW pages (case 2.3)  -> full merge of SW, data block and the page
//!                          (SW is then empty until the next offset-0 write)
//!   otherwise (case 3):    append to the RW blocks; when all are full, replace the oldest (round robin):
//!                          merge every logical block with a page in the victim, then erase the victim
//! merge(lbn) for an RW victim: newest copy of each page (SW if it holds it, else the newest RW page, else the
//!   data block) to a free block; erase the old data block; every RW page of lbn becomes invalid (-1)
//!   FAST merges each logical block with a page in the victim that is not invalid;
//!   O-FAST (lazy_merge) only those with a page in the victim that has no newer copy in another log block
//!   a victim with no logical block to merge is only erased ("dead" merge)
//! read(lpn): SW page if SW belongs to lbn and holds the offset, else the newest RW page, else the data block
//! ```
//! RAM: the block map (as `bast`), the SW block's physical block, logical block and page count, the RW blocks'
//! physical blocks, and the sector map of the RW blocks: one 4-byte entry per log page (FAST §3.2: "each entry
//! in sector-level mapping table can be stored in 4 bytes"). Spare area: the logical page number and the
//! chip's sequence number; the scheme word `SEQ_LOG_AUX` on SW pages and `RANDOM_LOG_AUX` on RW pages (data
//! pages and merge copies carry none), written with the page at no cost, so that a mount can tell the blocks
//! apart. A merge reads the spare area of each data-block page it may copy (no log copy), to learn whether it
//! holds data (FAST §3.4; `common/mechanisms/seq_logs.rs`), counted in `flash.spare_reads`. Extra physical blocks:
//! `log_blocks` + 1 (the free block a merge copies into).
//!
//! Mount (FAST §3.2, end: the sector map "can be rebuilt at boot from the spare areas", as M-Systems' FTL
//! does): one spare read per page of the chip (`physical blocks x pages per block`; 8 x 4 = 32 on the §2.4
//! device); a merge the cut interrupted is finished (its target's missing pages copied from their newest
//! copies, the replaced blocks erased: the only page reads, programs and erases of a mount); the RW blocks
//! return to the ring in the order they were opened ([`HybridBlocks::mount`]). A torn page (`torn_pages`) is a hole in an RW
//! block, taken and empty in a data block (a write in place, also into the target of an RW victim's merge
//! that left the SW block live); a merge whose target holds a torn copy (the blocks it replaces still there:
//! the rule of `common/mechanisms/boot_scan.rs`) is undone (full merge: the target is erased, the sources hold every
//! page) or redone into a free block (the SW block's partial merge, or a torn append to the SW block); a
//! block of torn pages only is erased (`common/mechanisms/seq_logs.rs`, "Torn pages").
//!
//! The write cases 1-2.3 and the merges are the FAST family's one write path (`common/mechanisms/seq_logs.rs`), shared
//! with LAST and MAST. A page written to the SW block makes its older RW copy stale (§3.6: a newer version in
//! a non-victim log block), so O-FAST skips a logical block whose victim pages the SW block has overwritten.
//!
//! Choices where the paper is silent or loose: the SW block is taken lazily (after a SW merge it is empty until
//! the next offset-0 write, which costs nothing: free blocks are erased); the SW block always holds offsets
//! 0..k of one logical block in place, and every write to that logical block goes to it or merges it, so its
//! pages are the newest; an RW victim's merge copies the SW block's pages of its logical block without
//! consuming the SW block; in case 2.2 the page is programmed at its own offset in the SW block (Fig. 7a's
//! "S4, -1, S6, -1") and the pages before and after it are copied in order; the victim's
//! erase is counted in the last full merge of that replacement (Fig. 8: "the first victim replacement requires
//! three erase operations"); a replaced block's written pages are recorded for the SW block (before the merge)
//! and for every RW victim (always full).
//!
//! On a multi-chip array it runs striped by default (`array/mod.rs`): its block is one physical block on
//! every plane, so successive pages go to successive dies and an erase erases every plane at once.
//! `placement=per-die` runs an instance per die instead, block `lbn` on die `lbn mod dies` (`ftl/per_die.rs`).

use super::common::bounds::Checks;
use super::common::mechanisms::log_blocks::sector_map_ram;
use super::common::mechanisms::seq_logs::{HybridBlocks, SeqWrite};
use super::{
    address_bytes, defaults_of, parse_as, Built, Ftl, Mounts, RamItem, Scheme, SchemeParams,
};
use crate::addr::{Lpn, Token};
use crate::config::ConfigError;
use crate::config::Geometry;
use crate::device::Device;
use crate::device::Result;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub const SCHEME: Scheme = Scheme {
    name: "fast",
    mapping: super::Mapping::Block,
    summary: "log blocks shared by all logical blocks (fully associative), one SW block for sequential runs",
    citation: "Lee et al. 2007, FAST paper sections 3.1-3.5",
    defaults: defaults_of::<FastParams>,
    parse: parse_as::<FastParams>,
    build: build_fast,
    figures: &[],
    profiles: &[],
    stress_variants,
    mount: Some(Mounts {
        variants: crash_variants,
        log_blocks: true,
        settles_torn_merges: true,
    }),
};

pub const OFAST: Scheme = Scheme {
    name: "ofast",
    mapping: super::Mapping::Block,
    summary: "FAST with lazy merge: skips merging a logical block whose victim pages all have newer copies",
    citation: "Lee et al. 2007, FAST paper section 3.6",
    defaults: ofast_defaults,
    parse: parse_as::<FastParams>,
    build: build_ofast,
    figures: &[],
    profiles: &[],
    stress_variants,
    mount: Some(Mounts {
        variants: ofast_crash_variants,
        log_blocks: true,
        settles_torn_merges: true,
    }),
};

/// The invariant suite's sets (FAST and O-FAST): two and three log blocks, the SW block and one or two RW.
fn stress_variants() -> Vec<Value> {
    vec![json!({"log_blocks": 2}), json!({"log_blocks": 3})]
}

/// The crash suites' sets for FAST.
fn crash_variants() -> Vec<Value> {
    vec![json!({}), json!({"log_blocks": 2})]
}

/// The crash suites' sets for O-FAST.
fn ofast_crash_variants() -> Vec<Value> {
    vec![json!({}), json!({"log_blocks": 3})]
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FastParams {
    /// Number of log blocks: one SW block and `log_blocks - 1` RW blocks.
    pub log_blocks: u32,
    /// O-FAST (§3.6): do not merge a logical block whose pages in the victim all have newer copies.
    pub lazy_merge: bool,
}

impl Default for FastParams {
    fn default() -> Self {
        FastParams {
            log_blocks: 8,
            lazy_merge: false,
        }
    }
}

fn ofast_defaults() -> Value {
    serde_json::to_value(FastParams {
        lazy_merge: true,
        ..FastParams::default()
    })
    .unwrap_or(Value::Null)
}

fn build_fast(params: &SchemeParams, g: &Geometry) -> Result<Built, ConfigError> {
    build(params.get("fast")?, g, "fast")
}

fn build_ofast(params: &SchemeParams, g: &Geometry) -> Result<Built, ConfigError> {
    build(params.get("ofast")?, g, "ofast")
}

fn build(p: &FastParams, g: &Geometry, name: &str) -> Result<Built, ConfigError> {
    Checks::new(name)
        .at_least(
            "log_blocks",
            p.log_blocks as u64,
            2,
            "one SW block and at least one RW block",
        )
        .extra_blocks("log_blocks", p.log_blocks, 1, 0, g)
        .finish()?;
    let extra = p.log_blocks + 1;
    let blocks = g.logical_blocks + extra;
    let ftl = FastFtl {
        ppb: g.pages_per_block,
        physical_blocks: blocks,
        lazy_merge: p.lazy_merge,
        blocks: HybridBlocks::new(g, 1, p.log_blocks - 1, blocks),
        tail: None,
    };
    Ok(Built {
        ftl: Box::new(ftl),
        extra_blocks: extra,
    })
}

pub struct FastFtl {
    ppb: u32,
    physical_blocks: u32,
    lazy_merge: bool,
    /// Data blocks, the SW log block (the one sequential log block), RW log blocks (`blocks.log`) and free
    /// blocks.
    blocks: HybridBlocks,
    /// The RW slot being filled; the next slot round the ring is the oldest (the next victim).
    tail: Option<u32>,
}

impl Ftl for FastFtl {
    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>> {
        self.blocks.read(lpn, dev)
    }

    fn unmapped_from(&self, lpn: Lpn, pages: u32) -> u32 {
        self.blocks.unmapped_from(lpn, pages)
    }

    fn write(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        if self.blocks.write_in_place(lpn, token, dev)? {
            return Ok(());
        }
        match self
            .blocks
            .write_seq(lpn, token, lpn.offset(self.ppb) == 0, dev)?
        {
            SeqWrite::NotMine => self.write_rw(lpn, token, dev),
            SeqWrite::Appended { .. } | SeqWrite::Merged(_) => Ok(()),
        }
    }

    /// Torn pages are detected at mount (`common/mechanisms/boot_scan.rs`, `settle_torn`).
    fn detects_torn_pages(&self) -> bool {
        true
    }

    /// FAST §3.2: the sector map rebuilt from the spare areas ([`HybridBlocks::mount`]); the RW blocks go
    /// back in the ring in the order they were opened, the newest at the tail.
    fn mount(&mut self, dev: &mut Device) -> Result<()> {
        let found = self.blocks.mount(dev, self.physical_blocks)?;
        self.tail = (found.len() as u32).checked_sub(1);
        Ok(())
    }

    fn ram(&self) -> Vec<RamItem> {
        let slots = self.blocks.log.slots() as u64;
        let entry = address_bytes(self.physical_blocks as u64);
        let mut ram = self.blocks.data.ram(self.physical_blocks);
        ram.push(RamItem::new(
            "sw_block",
            2 * entry + address_bytes(self.ppb as u64 + 1),
            format!("physical block + logical block ({entry} B each) + page count"),
        ));
        ram.push(RamItem::new(
            "rw_block_table",
            slots * entry,
            format!("{slots} RW log blocks x {entry} B"),
        ));
        ram.push(sector_map_ram(slots, self.ppb, "RW log blocks"));
        ram
    }
}

impl FastFtl {
    /// Case 3: append to the RW blocks, replacing the oldest when all are full.
    fn write_rw(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        let slots = self.blocks.log.slots();
        let slot = match self.tail {
            Some(t) if !self.blocks.log.is_full(t) => t,
            Some(t) if t + 1 < slots && self.blocks.log.pbn(t + 1).is_none() => {
                self.open_rw(t + 1, dev)?
            }
            None => self.open_rw(0, dev)?,
            Some(t) => {
                let victim = (t + 1) % slots;
                self.replace(victim, dev)?;
                self.open_rw(victim, dev)?
            }
        };
        self.blocks.append_random(slot, lpn, token, 0, dev)
    }

    fn open_rw(&mut self, slot: u32, dev: &Device) -> Result<u32> {
        let pbn = self
            .blocks
            .pool
            .take()
            .ok_or_else(|| dev.out_of_space("no free block for an RW log block"))?;
        self.blocks.log.open(slot, pbn);
        self.tail = Some(slot);
        Ok(slot)
    }

    /// Replaces the RW block in `victim` (§3.4, §3.6): merges the logical blocks it must, then erases it.
    fn replace(&mut self, victim: u32, dev: &mut Device) -> Result<()> {
        self.blocks.merge_victim(dev, victim, !self.lazy_merge)?;
        Ok(())
    }
}
