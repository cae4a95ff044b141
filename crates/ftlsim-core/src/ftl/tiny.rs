//! `tiny`: TinyFTL (Lee, Jung, Kim, Maeng, "Memory Management Scheme for Cost-Effective Disk-On-Modules in
//! Consumer Electronics Devices", §V).
//!
//! ```text
//! write(lpn): lbn, off := lpn div N, lpn mod N
//!             block table of lbn: block table cache (LRU) hit, or read its map page (a dirty victim is
//!                                 written back to a map block first)
//!             page table of (lbn, off):  page mapping cache (LRU) hit, or read the spare areas holding the
//!                                 newest page directory and page table of lbn
//!             no data block          -> take a free block (the block table entry changes)
//!             data block has a free page -> program the next one (pages sit anywhere in the block)
//!             else log block has a free page -> program it (no log block: take one; when all log blocks are
//!                                 in use, compact a victim first: by `victim`, see below)
//!             else compact lbn and retry
//!             the program carries lbn's new page directory and page table in its spare area (no extra op)
//! compact(lbn): every valid page in the log     -> the log becomes the data block; erase the old one (switch)
//!             otherwise copy the valid pages of data + log block, in page order, into a free block; erase
//!             both (full); then write every dirty block table and the block directory to the map blocks
//!             (§V.B: "The block directory is flushed ... at the end of the garbage collection process")
//! read(lpn):  the same two lookups, then read the page (or nothing if it was never written)
//! ```
//! RAM (§V.C, Table I), counted from the structures; on the `tinyftl-16g` preset (65,536 chip blocks):
//! - block directory 256 x 3 B = 768: one entry per block table, a chip page address (8,388,608 pages);
//!   the directory spans the chip's whole block address space (65,536 / 256 entries a table), as §V.E.
//! - block table cache 8 x (768 + 3) + 3 = 6,171: a unit holds a table of 256 entries x 3 B (a 2 B data
//!   block number and 1 B page offset of the newest page directory in it; §VI.D: "occupies 768 bytes"),
//!   a 1 B tag (directory index) and 1 B prev / next LRU pointers; plus LRU head and tail (1 B each) and a
//!   dirty bitmap (8 bits). Derived: the paper gives the total only.
//! - page mapping cache 128 x (24 + 5 + 2) + 2 = 3,970: a unit is a page directory entry with its page table
//!   (24 B, §VI.E; scaled by entries/16 on other geometries), tagged by the physical block number (2 B) and
//!   physical page number (3 B) it was read from (§V.C), with 1 B prev / next pointers; plus head and tail.
//!   Derived.
//! - log block list 1,280: 393 entries x 26 bits (log block number 16 bits, next pointer in LRU order 9 bits,
//!   an in-use bit) + head and tail (9 bits each) = 10,236 bits, rounded up to bytes. It is also exactly the
//!   rest of the 2 KB directory page (2,048 - 768), which is why 393 is the most log blocks (§V.E): 394
//!   entries need 10,262 bits > 10,240. Derived.
//! - reserved free blocks 3 x 2 B = 6.
//!   Total 12,195 (Table I).
//!
//! Spare area: the logical page number; the page directory (8 entries) and page table (16 entries) of the
//! page's logical block ride in the spare of each programmed page (§V.B) — modelled as free, as the paper
//! says; the simulator records where the newest copy of each lives, and a page mapping cache miss costs one
//! spare read of the directory copy plus one of the table copy if it is elsewhere (map class). The chip
//! stamps each program with a sequence number. Map pages carry their map page number in the scheme word.
//! Nothing else is written for recovery: no extra flash operation.
//!
//! Mount (after a power cut; §V.D: "we can recover all the information by checking reserved free blocks"
//! and the page tables in spare areas). The simulator keeps the cost of the map pages and spare-area tables
//! but not their contents, so the mount rebuilds them from what each spare area holds (logical page,
//! sequence number): it reads every map block and every pool block up to its first erased page (pages are
//! programmed in order). Cost: one spare read per programmed page plus one per block not full; no page read.
//! That is an upper bound on §V.D's procedure, which reads the newest block tables and scans only the blocks
//! taken since they were written. What it rebuilds:
//! - map blocks ([`MapArea::mount`]): the newest copy of each block table and of the directory by sequence
//!   number, the block being filled, and a map garbage collection a cut interrupted (finished);
//! - each logical block's blocks by age (every block holds pages of one logical block): the oldest is its
//!   data block, the next its log block; a third is the target of a compaction cut while copying: it holds
//!   only copies, so it is erased (one erase) and the compaction undone. A cut after the data block's erase
//!   leaves (old log, target): the old log serves as data block, the target as log block. Each continues at
//!   its first erased page; a torn program (programmed, no logical page) only occupies its page,
//!   and a block holding nothing but one is erased;
//! - the newest copy of each logical page, page directory and page table (by sequence number), the log-block
//!   list in LRU order of each log block's newest page, the free pool (erased blocks, in address order).
//!   The block table and page mapping caches start empty and clean (what the map pages say is never read
//!   back: the scan is the truth).
//!
//! Choices where the paper is silent:
//! - A logical block's first writes fill its data block in arrival order; a log block is taken only when the
//!   data block has no erased page. Log blocks are not fixed blocks: a switch makes the log the data block.
//! - A block table never written to flash (fresh device) is known empty from the directory: its miss costs
//!   no read. Tables and directory are written to the map blocks ([`MapArea`]) on a dirty eviction and after
//!   every compaction; map blocks are garbage collected greedily. `finish` flushes dirty tables.
//! - The page mapping cache is write-through (the spare copy is written with the data): evictions are free.
//! - The log-block LRU order is refreshed by every write to a logical block that has a log block.
//! - Victim log block (`victim`): `lru` (default) compacts the least recently used log block, as §V.E
//!   describes ("The list of log blocks is linked in the LRU order") and §V.A's garbage collection implies.
//!   `switchable` is not TinyFTL's: it compacts the least recently used log block that can be switched (it
//!   holds the newest copy of every page of its logical block), else the least recently used one, the victim
//!   rule the FAST paper §3.7 assumes for Logblock (BAST), so that the two schemes can be compared under one
//!   rule. A log block can only be switched once full, and a write to a logical block whose log block is
//!   full compacts it at once, so a switchable log block is never touched again: the least recently used
//!   switchable one is the one that became switchable first. The controller needs a switchable bit in each
//!   log block list entry for it (counted in `log_block_list`); whether a block is switchable is learnt from
//!   its page table when its last page is programmed.
//! - Compaction order, re-read from §V.A: "when the reserved log blocks are exhausted, TinyFTL
//!   starts the garbage collection process", which compacts the least recently used log block, as here; a
//!   logical block whose data and log blocks are both full is compacted at once (the paper does not say;
//!   it is the only way to take the write). §V gives no merge kinds: a compaction is a switch only when the
//!   log block holds every page of the logical block, else every valid page is copied (§II's garbage
//!   collection) and both blocks are erased.
//! - Trim is ignored (correct; a later read may return the old data).
//! - Sizes on small devices: log blocks min(393, max(1, logical/2)); map blocks min(256, max(1, logical/4)),
//!   raised to what the map pages need; extra blocks max(24 per 1,024 of the chip, log + map + reserved free)
//!   (a run that states its extra blocks gets them, down to log + map + reserved free).
//!   On `tinyftl-16g` that is 1,536: 393 log, 256 map, the rest free and bad-block reserve (the paper says
//!   877 for bad blocks, but 1,536 - 393 - 256 = 887).
//! - Block table entries (256) and page table entries (16) are parameters too, so that toy devices exercise
//!   the caches; block table cache 1..64 units and page table cache 8..512 entries (§VI.D, §VI.E ranges).
//!
//! On a multi-chip array it runs striped by default (`array/mod.rs`): its block is one physical block on
//! every plane, so successive pages go to successive dies and an erase erases every plane at once.
//! `placement=per-die` runs an instance per die instead, block `lbn` on die `lbn mod dies` (`ftl/per_die.rs`).

use super::common::bounds::{layout_extra_blocks, Checks};
use super::common::mechanisms::boot_scan::{scan_block, Extent};
use super::common::mechanisms::free_pool::FreePool;
use super::common::mechanisms::map_area::{load_page_table, rebuild_spare_tables, MapArea};
use super::common::structures::lru::Lru;
use super::{
    address_bytes, defaults_of, parse_as, Built, Extra, Ftl, Mounts, RamItem, Scheme, SchemeParams,
};
use crate::addr::{Lbn, Lpn, Opt, Pbn, Ppn, Token};
use crate::config::ConfigError;
use crate::config::Geometry;
use crate::device::Device;
use crate::device::{FlashError, Result};
use crate::figure::{Figure, Unit};
use crate::nand::OpClass;
use crate::sparse::SparseVec;
use crate::stats::{CacheKind, MergeKind};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub const SCHEME: Scheme = Scheme {
    name: "tiny",
    mapping: super::Mapping::Block,
    summary: "TinyFTL: block-mapped with a log block per busy block, pages anywhere in them, map cached in 12 KB",
    citation: "Lee, Jung, Kim, Maeng, Memory Management Scheme for Cost-Effective Disk-On-Modules, IEEE TCE 2009, section V",
    defaults: defaults_of::<TinyParams>,
    parse: parse_as::<TinyParams>,
    build,
    figures: FIGURES,
    profiles: &[],
    stress_variants,
    mount: Some(Mounts {
        variants: crash_variants,
        log_blocks: true,
        settles_torn_merges: false,
    }),
};

/// The report keys of TinyFTL's own figures and what each means.
pub const FIGURES: &[Figure] = &[
    Figure {
        key: "tiny.log_blocks",
        unit: Unit::Count,
        description: "log blocks on the LRU list, as run (log_blocks clamped)",
        table: false,
    },
    Figure {
        key: "tiny.map_blocks",
        unit: Unit::Count,
        description:
            "blocks reserved for block tables and the directory, as run (map_blocks clamped)",
        table: false,
    },
    Figure {
        key: "tiny.block_table_cache_units",
        unit: Unit::Count,
        description: "block tables the block table cache holds (block_table_cache_units)",
        table: false,
    },
    Figure {
        key: "tiny.page_table_cache_entries",
        unit: Unit::Count,
        description: "page tables the page mapping cache holds (page_table_cache_entries)",
        table: false,
    },
];

/// The invariant suite's sets.
fn stress_variants() -> Vec<Value> {
    vec![
        // Every cache as small as allowed, tables of 2 blocks and 2 pages: misses and write-backs everywhere.
        json!({"log_blocks": 1, "block_table_cache_units": 1, "page_table_cache_entries": 8,
               "block_table_entries": 2, "page_table_entries": 2}),
        json!({"log_blocks": 2, "reserved_free_blocks": 1, "block_table_entries": 1}),
        // FAST §3.7's victim rule: a switchable log block first.
        json!({"log_blocks": 2, "victim": "switchable"}),
        json!({"log_blocks": 1, "victim": "switchable", "block_table_cache_units": 1,
               "page_table_cache_entries": 8, "block_table_entries": 2}),
    ]
}

/// The crash suites' sets. The defaults are left out: their 8 log blocks for the suites' 16 hot logical blocks
/// make a hot loop compact on almost every write, so every lost in-flight write shortens the run and too few
/// of the planned cuts land; `tests/golden_mount_tiny.rs` crash-tests them.
fn crash_variants() -> Vec<Value> {
    vec![
        json!({"log_blocks": 4}),
        // Every cache as small as allowed, tables of 2 blocks and 2 pages: write-backs everywhere.
        json!({"log_blocks": 1, "block_table_cache_units": 1, "page_table_cache_entries": 8,
               "block_table_entries": 2, "page_table_entries": 2}),
        json!({"log_blocks": 3, "block_table_cache_units": 1, "page_table_cache_entries": 8,
               "block_table_entries": 2, "page_table_entries": 2}),
        json!({"log_blocks": 3, "victim": "switchable"}),
    ]
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TinyParams {
    /// Log blocks on the LRU list (§V.E: 393), clamped to max(1, logical blocks / 2).
    pub log_blocks: u32,
    /// Blocks reserved for block tables and the directory (§V.E: 256), clamped on small devices.
    pub map_blocks: u32,
    /// Free blocks kept for compaction (§V.C, Table I: 3).
    pub reserved_free_blocks: u32,
    /// Entries in a block table (§V.E: 256).
    pub block_table_entries: u32,
    /// Block tables the block table cache holds (§V.E: 8; 1..64).
    pub block_table_cache_units: u32,
    /// Entries in a page table (§V.E: 16); a block's page directory has pages_per_block / this entries.
    pub page_table_entries: u32,
    /// Page tables the page mapping cache holds (§V.E: 128; 8..512).
    pub page_table_cache_entries: u32,
    /// Physical space beyond the logical capacity, as a fraction of it; none: the TinyFTL layout (24 blocks
    /// in every 1,024). Never less than the scheme uses.
    pub over_provisioning: Option<f64>,
    /// Which log block is compacted when all are in use: `lru` (§V.E) or `switchable` (FAST §3.7's rule for
    /// Logblock: the least recently used log block that can be switched, else the least recently used).
    pub victim: LogVictim,
}

/// How TinyFTL picks the log block to compact when all log blocks are in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LogVictim {
    /// The least recently used log block (TinyFTL §V.E).
    Lru,
    /// The least recently used log block that can be switched, else the least recently used (FAST §3.7).
    Switchable,
}

impl Default for TinyParams {
    fn default() -> Self {
        TinyParams {
            log_blocks: 393,
            map_blocks: 256,
            reserved_free_blocks: 3,
            block_table_entries: 256,
            block_table_cache_units: 8,
            page_table_entries: 16,
            page_table_cache_entries: 128,
            over_provisioning: None,
            victim: LogVictim::Lru,
        }
    }
}

const BT_RANGE: &str = "the paper's range of block table cache units is 1 to 64, §VI.D";
const PT_RANGE: &str = "the paper's range of page mapping cache entries is 8 to 512, §VI.E";

pub struct TinyFtl {
    ppb: u32,
    chip_blocks: u32,
    log_blocks: u32,
    map_blocks: u32,
    reserved_free: u32,
    bt_entries: u32,
    pt_entries: u32,
    /// Page tables per logical block (the page directory's entries).
    tables_per_block: u32,
    directory_page: u32,
    data: Vec<Opt<Pbn>>,
    data_next: Vec<u32>,
    log: Vec<Opt<Pbn>>,
    log_next: Vec<u32>,
    /// Newest location of each logical page (what the spare-area page tables say).
    loc: SparseVec<Opt<Ppn>>,
    /// Where the newest copy of each logical block's page directory, and of each page table, was programmed.
    dir_loc: Vec<Opt<Ppn>>,
    table_loc: SparseVec<Opt<Ppn>>,
    block_tables: Lru,
    page_tables: Lru,
    log_list: Lru<Lbn>,
    victim: LogVictim,
    /// Under `switchable`: the logical blocks whose log block can be switched, in the order they became so
    /// (which is their LRU order: a full log block is never written again).
    switchable: Lru<Lbn>,
    map: MapArea,
    free: FreePool,
    scratch: Vec<u32>,
    /// A compaction's scratch: the logical block's entries of `loc`, and the pages it copies in one run.
    block_locs: Vec<Opt<Ppn>>,
    run: Vec<Ppn>,
}

fn build(params: &SchemeParams, g: &Geometry) -> Result<Built, ConfigError> {
    let p: &TinyParams = params.get("tiny")?;
    let mut checks = Checks::new("tiny");
    checks
        .over_provisioning(p.over_provisioning)
        .at_least(
            "block_table_cache_units",
            p.block_table_cache_units as u64,
            1,
            BT_RANGE,
        )
        .at_most(
            "block_table_cache_units",
            p.block_table_cache_units as u64,
            64,
            BT_RANGE,
        )
        .at_least(
            "page_table_cache_entries",
            p.page_table_cache_entries as u64,
            8,
            PT_RANGE,
        )
        .at_most(
            "page_table_cache_entries",
            p.page_table_cache_entries as u64,
            512,
            PT_RANGE,
        );
    for (name, v) in [
        ("log_blocks", p.log_blocks),
        ("map_blocks", p.map_blocks),
        ("reserved_free_blocks", p.reserved_free_blocks),
        ("block_table_entries", p.block_table_entries),
        ("page_table_entries", p.page_table_entries),
    ] {
        checks.at_least(name, v as u64, 1, "a count");
    }
    checks.finish()?;
    let l = g.logical_blocks;
    let ppb = g.pages_per_block;
    let log_blocks = p.log_blocks.min((l / 2).max(1));
    let tables = l.div_ceil(p.block_table_entries);
    let map_pages = tables + 1;
    let map_blocks = p
        .map_blocks
        .min((l / 4).max(1))
        .max(MapArea::min_blocks(map_pages, ppb));
    checks
        .extra_blocks(
            "reserved_free_blocks",
            p.reserved_free_blocks,
            0,
            log_blocks + map_blocks,
            g,
        )
        .finish()?;
    let needed = log_blocks + map_blocks + p.reserved_free_blocks;
    let extra = layout_extra_blocks(g, p.over_provisioning, needed);
    let chip_blocks = l + extra;
    let pool = chip_blocks - map_blocks;
    let pt_entries = p.page_table_entries.min(ppb);
    let tables_per_block = ppb.div_ceil(pt_entries);
    let ftl = TinyFtl {
        ppb,
        chip_blocks,
        log_blocks,
        map_blocks,
        reserved_free: p.reserved_free_blocks,
        bt_entries: p.block_table_entries,
        pt_entries,
        tables_per_block,
        directory_page: tables,
        data: vec![Opt::NONE; l as usize],
        data_next: vec![0; l as usize],
        log: vec![Opt::NONE; l as usize],
        log_next: vec![0; l as usize],
        loc: SparseVec::new(g.logical_pages() as usize, Opt::NONE),
        dir_loc: vec![Opt::NONE; l as usize],
        table_loc: SparseVec::new((l * tables_per_block) as usize, Opt::NONE),
        block_tables: Lru::new(p.block_table_cache_units, tables),
        page_tables: Lru::new(p.page_table_cache_entries, l * tables_per_block),
        log_list: Lru::new(log_blocks, l),
        victim: p.victim,
        switchable: Lru::new(log_blocks, l),
        map: MapArea::new(Pbn(pool), map_blocks, map_pages, ppb),
        free: FreePool::with_range(Pbn(0), pool),
        scratch: Vec::new(),
        block_locs: vec![Opt::NONE; g.pages_per_block as usize],
        run: Vec::with_capacity(g.pages_per_block as usize),
    };
    Ok(Built {
        ftl: Box::new(ftl),
        extra_blocks: extra,
    })
}

impl Ftl for TinyFtl {
    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>> {
        self.lookup_block_table(lpn.lbn(self.ppb), dev)?;
        self.lookup_page_table(lpn, dev)?;
        match self.loc.get(lpn.index()).get() {
            None => Ok(None),
            Some(ppn) => dev.read_token(ppn),
        }
    }

    fn write(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        let lbn = lpn.lbn(self.ppb);
        self.lookup_block_table(lbn, dev)?;
        let unit = self.lookup_page_table(lpn, dev)?;
        let ppn = self.free_page(lbn, dev)?;
        dev.program(ppn, token, lpn)?;
        self.loc.set(lpn.index(), Opt::some(ppn));
        self.dir_loc[lbn.index()] = Opt::some(ppn);
        self.table_loc.set(unit as usize, Opt::some(ppn));
        if self.victim == LogVictim::Switchable && self.log_next[lbn.index()] == self.ppb {
            self.note_if_switchable(lbn);
        }
        Ok(())
    }

    /// End of the trace: dirty block tables (and then the directory) go to flash, as at power-off.
    fn finish(&mut self, dev: &mut Device) -> Result<()> {
        if self.block_tables.has_dirty() {
            self.flush_block_tables(dev)?;
        }
        Ok(())
    }

    fn detects_torn_pages(&self) -> bool {
        true
    }

    fn mount(&mut self, dev: &mut Device) -> Result<()> {
        let (ppb, lbns) = (self.ppb, self.data.len() as u32);
        let pool = self.chip_blocks - self.map_blocks;
        self.map.mount(dev)?;
        // Block `pbn` of the pool: its logical block, the sequence numbers of its first and last pages
        // (pages are programmed in order), and how many are programmed; every page found as (ppn, lpn, seq).
        let mut claims: Vec<(Lbn, u32, Pbn, u32, u32)> = Vec::new();
        let mut pages: Vec<(Ppn, Lpn, u32)> = Vec::new();
        let mut free = FreePool::default();
        for pbn in (0..pool).map(Pbn) {
            let (mut lbn, mut first, mut last) = (None, 0, 0);
            let n = scan_block(dev, pbn, Extent::UpToFirstErased, |off, ppn, spare| {
                if off == 0 {
                    first = spare.seq;
                }
                last = spare.seq;
                // A torn program (no logical page) holds nothing: it only occupies its page.
                let Some(lpn) = spare.lpn() else { return };
                lbn = Some(lpn.lbn(ppb));
                pages.push((ppn, lpn, spare.seq));
            })?;
            match (n, lbn) {
                (0, _) => free.put(pbn),
                // Nothing but a torn program (the first one into a fresh block): erased at mount.
                (_, None) => {
                    dev.erase(pbn)?;
                    free.put(pbn);
                }
                (n, Some(lbn)) => claims.push((lbn, first, pbn, n, last)),
            }
        }
        // A logical block's blocks by age: its data block, its log block (taken when the data block was
        // full), and the target of a compaction a cut interrupted while copying. The target holds only
        // copies of pages still in the other two: it is erased (one erase) and the compaction is undone.
        // A cut after the data block's erase leaves (old log, target): the old log serves as the data
        // block, the complete target as the log, and the next compaction reclaims the stale pages.
        claims.sort_unstable();
        self.data.fill(Opt::NONE);
        self.data_next.fill(0);
        self.log.fill(Opt::NONE);
        self.log_next.fill(0);
        let mut dropped = Vec::new();
        let mut logs = Vec::new();
        for group in claims.chunk_by(|a, b| a.0 == b.0) {
            let b = group[0].0.index();
            if let Some(&(_, _, extra, _, _)) = group.get(3) {
                return Err(FlashError::NandRule {
                    scheme: dev.scheme().to_string(),
                    what: format!(
                        "mount found a fourth block of logical block {b} (tiny holds at most a data block, a \
                         log block and a compaction target); the chip was not written by tiny"
                    ),
                    block: extra.0,
                    page: 0,
                });
            }
            (self.data[b], self.data_next[b]) = (Opt::some(group[0].2), group[0].3);
            if let Some(&(_, _, pbn, n, last)) = group.get(1) {
                (self.log[b], self.log_next[b]) = (Opt::some(pbn), n);
                logs.push((last, group[0].0));
            }
            if let Some(&(_, _, target, _, _)) = group.get(2) {
                dev.erase(target)?;
                free.put(target);
                dropped.push(target);
            }
        }
        // The log-block list in LRU order: by the newest page written in each log block.
        self.log_list = Lru::new(self.log_blocks, lbns);
        logs.sort_unstable();
        for &(_, lbn) in &logs {
            if self.log_list.is_full() {
                return Err(dev.out_of_space(format!(
                    "mount found more logical blocks with a log block than the {} log blocks",
                    self.log_blocks
                )));
            }
            self.log_list.insert(lbn);
        }
        // The newest copy of each logical page, and of each page directory and page table (§V.B).
        dropped.sort_unstable();
        self.loc = SparseVec::new(self.loc.len(), Opt::NONE);
        let mut newest = SparseVec::new(self.loc.len(), 0u32);
        for &(ppn, lpn, seq) in &pages {
            if seq > newest.get(lpn.index()) && dropped.binary_search(&ppn.block(ppb)).is_err() {
                newest.set(lpn.index(), seq);
                self.loc.set(lpn.index(), Opt::some(ppn));
            }
        }
        let (pte, tables) = (self.pt_entries, self.tables_per_block);
        rebuild_spare_tables(
            &self.loc,
            &newest,
            |lpn| lpn.lbn(ppb).index(),
            &mut self.dir_loc,
            |lpn| (lpn.lbn(ppb).0 * tables + lpn.offset(ppb) / pte) as usize,
            &mut self.table_loc,
        );
        // The switchable log blocks, in the order they became so (the order of their newest page).
        self.switchable = Lru::new(self.log_blocks, lbns);
        if self.victim == LogVictim::Switchable {
            for &(_, lbn) in &logs {
                if self.log_next[lbn.index()] == ppb {
                    self.note_if_switchable(lbn);
                }
            }
        }
        self.free = free;
        self.block_tables = Lru::new(self.block_tables.capacity(), self.directory_page);
        self.page_tables = Lru::new(self.page_tables.capacity(), lbns * tables);
        Ok(())
    }

    fn ram(&self) -> Vec<RamItem> {
        let chip_pages = self.chip_blocks as u64 * self.ppb as u64;
        let dir_entries = self.chip_blocks.div_ceil(self.bt_entries) as u64;
        let dir_entry = address_bytes(chip_pages);
        let bt_entry = address_bytes(self.chip_blocks as u64) + address_bytes(self.ppb as u64);
        let units = self.block_tables.capacity() as u64;
        let unit_ptr = address_bytes(units);
        let unit_bytes = self.bt_entries as u64 * bt_entry;
        let bt_cache = units * (unit_bytes + address_bytes(dir_entries) + 2 * unit_ptr)
            + 2 * unit_ptr
            + units.div_ceil(8);
        let pm = self.page_tables.capacity() as u64;
        let pm_ptr = address_bytes(pm);
        let pm_unit = (24 * self.pt_entries as u64).div_ceil(16);
        let pm_tag = address_bytes(self.chip_blocks as u64) + address_bytes(chip_pages);
        let pm_cache = pm * (pm_unit + pm_tag + 2 * pm_ptr) + 2 * pm_ptr;
        let bits = |n: u64| 64 - n.saturating_sub(1).leading_zeros() as u64;
        let log = self.log_blocks as u64;
        let switchable_bit = (self.victim == LogVictim::Switchable) as u64;
        let log_entry_bits = bits(self.chip_blocks as u64) + bits(log) + 1 + switchable_bit;
        let log_list = (log * log_entry_bits + 2 * bits(log)).div_ceil(8);
        let block_addr = address_bytes(self.chip_blocks as u64);
        vec![
            RamItem::new(
                "block_directory",
                dir_entries * dir_entry,
                format!("{dir_entries} entries (one per block table over {} chip blocks) x {dir_entry} B chip page address", self.chip_blocks),
            ),
            RamItem::new(
                "block_table_cache",
                bt_cache,
                format!(
                    "{units} units x ({} entries x {bt_entry} B table + {} B tag + 2 x {unit_ptr} B LRU pointers) \
                     + 2 x {unit_ptr} B head/tail + {} B dirty bitmap (layout derived from Table I's 6,171)",
                    self.bt_entries,
                    address_bytes(dir_entries),
                    units.div_ceil(8)
                ),
            ),
            RamItem::new(
                "page_mapping_cache",
                pm_cache,
                format!(
                    "{pm} units x ({pm_unit} B page directory entry + page table (§VI.E) + {pm_tag} B tag \
                     (physical block and page number) + 2 x {pm_ptr} B LRU pointers) + 2 x {pm_ptr} B head/tail \
                     (layout derived from Table I's 3,970)"
                ),
            ),
            RamItem::new(
                "log_block_list",
                log_list,
                format!(
                    "{log} entries x {log_entry_bits} bits (log block number, next pointer in LRU order, in-use \
                     bit{}) + 2 x {} bits head/tail, in bytes (layout derived from Table I's 1,280)",
                    if switchable_bit == 1 { ", switchable bit" } else { "" },
                    bits(log)
                ),
            ),
            RamItem::new(
                "reserved_free_blocks",
                self.reserved_free as u64 * block_addr,
                format!("{} blocks x {block_addr} B block number", self.reserved_free),
            ),
        ]
    }

    fn extra(&self, out: &mut Extra) {
        out.push(("tiny.log_blocks".into(), self.log_blocks.into()));
        out.push(("tiny.map_blocks".into(), self.map_blocks.into()));
        out.push((
            "tiny.block_table_cache_units".into(),
            self.block_tables.capacity().into(),
        ));
        out.push((
            "tiny.page_table_cache_entries".into(),
            self.page_tables.capacity().into(),
        ));
    }
}

impl TinyFtl {
    /// Makes the block table of `lbn` resident (§V.C): a miss reads its map page, after writing back a
    /// dirty victim.
    fn lookup_block_table(&mut self, lbn: Lbn, dev: &mut Device) -> Result<()> {
        let table = lbn.0 / self.bt_entries;
        let hit = self.block_tables.touch(table);
        dev.record_cache(CacheKind::BlockTableCache, hit);
        if !hit {
            if let Some((victim, true)) = self.block_tables.insert(table) {
                self.map.write(dev, victim)?;
            }
            self.map.read(dev, table)?;
        }
        Ok(())
    }

    /// The block table entry of `lbn` changed (new data block): it must be resident, and is now dirty.
    fn block_table_changed(&mut self, lbn: Lbn, dev: &mut Device) -> Result<()> {
        let table = lbn.0 / self.bt_entries;
        if !self.block_tables.contains(table) {
            self.lookup_block_table(lbn, dev)?;
        }
        self.block_tables.set_dirty(table);
        Ok(())
    }

    /// Makes the page table holding `lpn` resident (§V.C); a miss reads the spare areas holding the newest
    /// page directory and page table of the block. Returns the page table's number.
    fn lookup_page_table(&mut self, lpn: Lpn, dev: &mut Device) -> Result<u32> {
        let lbn = lpn.lbn(self.ppb);
        let unit = lbn.0 * self.tables_per_block + lpn.offset(self.ppb) / self.pt_entries;
        let dir = self.dir_loc[lbn.index()];
        let table = self.table_loc.get(unit as usize);
        load_page_table(&mut self.page_tables, unit, dir, table, dev)?;
        Ok(unit)
    }

    /// The page the next write to `lbn` goes to: the data block's next erased page, else the log block's,
    /// taking or compacting blocks as needed.
    fn free_page(&mut self, lbn: Lbn, dev: &mut Device) -> Result<Ppn> {
        let b = lbn.index();
        loop {
            let data = match self.data[b].get() {
                Some(data) => data,
                None => {
                    let data = self.take_free(dev)?;
                    self.data[b] = Opt::some(data);
                    self.data_next[b] = 0;
                    self.block_table_changed(lbn, dev)?;
                    data
                }
            };
            if self.data_next[b] < self.ppb {
                self.data_next[b] += 1;
                return Ok(dev.ppn(data, self.data_next[b] - 1));
            }
            let log = match self.log[b].get() {
                Some(log) => {
                    self.log_list.touch(lbn);
                    log
                }
                None => {
                    if self.log_list.is_full() {
                        let victim = self.victim_log_block();
                        self.compact(victim, dev)?;
                    }
                    let log = self.take_free(dev)?;
                    self.log[b] = Opt::some(log);
                    self.log_next[b] = 0;
                    self.log_list.insert(lbn);
                    log
                }
            };
            if self.log_next[b] < self.ppb {
                self.log_next[b] += 1;
                return Ok(dev.ppn(log, self.log_next[b] - 1));
            }
            self.compact(lbn, dev)?;
        }
    }

    /// Merges the log block of `lbn` with its data block (§V.A), then flushes the block tables and the
    /// block directory (§V.B).
    fn compact(&mut self, lbn: Lbn, dev: &mut Device) -> Result<()> {
        let b = lbn.index();
        let data = self.data[b]
            .get()
            .expect("a compacted logical block has a data block");
        let log = self.log[b]
            .get()
            .expect("a compacted logical block has a log block");
        dev.record_log_utilization(self.log_next[b]);
        // The logical block's page locations, read a chunk at a time.
        let first = lbn.first_lpn(self.ppb).index();
        self.loc.read_range(first, &mut self.block_locs);
        let (mut valid, mut in_log) = (0, 0);
        for at in self.block_locs.iter().filter_map(|at| at.get()) {
            valid += 1;
            in_log += (at.block(self.ppb) == log) as u32;
        }
        for block in [data, log] {
            dev.prefetch_block(block);
        }
        let mark = dev.begin_merge();
        let kind = if valid == self.ppb && in_log == valid {
            dev.erase(data)?;
            self.free.put(data);
            self.data[b] = Opt::some(log);
            self.data_next[b] = self.ppb;
            MergeKind::Switch
        } else {
            let to = self.take_free(dev)?;
            // The valid pages, in page order, go to the first pages of `to`: in one call where the device
            // can, else one by one (the same operations, in the same order).
            let locs = &self.block_locs;
            self.run.clear();
            self.run.extend(locs.iter().filter_map(|at| at.get()));
            let at_once =
                self.run.len() > 1 && dev.copy_run(OpClass::Data, &self.run, dev.ppn(to, 0));
            let mut next = 0;
            // A page table's newest copy rides with the last page copied from its range of offsets.
            let pt = self.pt_entries as usize;
            let first_unit = (lbn.0 * self.tables_per_block) as usize;
            for (unit, unit_locs) in locs.chunks(pt).enumerate() {
                let mut last_in_table = Opt::NONE;
                for (i, at) in unit_locs.iter().enumerate() {
                    if let Some(from) = at.get() {
                        let ppn = dev.ppn(to, next);
                        if !at_once {
                            dev.copy(from, ppn)?;
                        }
                        self.loc.set(first + unit * pt + i, Opt::some(ppn));
                        last_in_table = Opt::some(ppn);
                        next += 1;
                    }
                }
                self.table_loc.set(first_unit + unit, last_in_table);
            }
            self.dir_loc[b] = Opt::from(next.checked_sub(1).map(|last| dev.ppn(to, last)));
            for old in [data, log] {
                dev.erase(old)?;
                self.free.put(old);
            }
            self.data[b] = Opt::some(to);
            self.data_next[b] = next;
            if valid == 0 {
                MergeKind::Dead
            } else {
                MergeKind::Full
            }
        };
        dev.end_merge(mark, kind);
        self.log[b] = Opt::NONE;
        self.log_list.remove(lbn);
        self.switchable.remove(lbn);
        self.block_table_changed(lbn, dev)?;
        self.flush_block_tables(dev)
    }

    /// The log block to compact when all are in use (`victim`).
    fn victim_log_block(&self) -> Lbn {
        let lru = || self.log_list.lru().expect("a full list has an LRU entry");
        match self.victim {
            LogVictim::Lru => lru(),
            LogVictim::Switchable => self.switchable.lru().unwrap_or_else(lru),
        }
    }

    /// Called when the log block of `lbn` is full: it can be switched when it holds the newest copy of every
    /// page of `lbn` (FAST §2.4's switch merge), then it joins the switchable ones as the newest.
    fn note_if_switchable(&mut self, lbn: Lbn) {
        let Some(log) = self.log[lbn.index()].get() else {
            return;
        };
        let all_in_log = (0..self.ppb).all(|off| {
            self.loc
                .get(lbn.lpn(off, self.ppb).index())
                .get()
                .is_some_and(|at| at.block(self.ppb) == log)
        });
        if all_in_log {
            self.switchable.insert(lbn);
        }
    }

    /// Writes every dirty cached block table and the block directory to the map blocks.
    fn flush_block_tables(&mut self, dev: &mut Device) -> Result<()> {
        let mut dirty = std::mem::take(&mut self.scratch);
        self.block_tables.take_dirty(&mut dirty);
        for &table in &dirty {
            self.map.write(dev, table)?;
        }
        self.scratch = dirty;
        self.map.write(dev, self.directory_page)
    }

    fn take_free(&mut self, dev: &Device) -> Result<Pbn> {
        self.free
            .take()
            .ok_or_else(|| dev.out_of_space("no free block"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Timing;

    /// TinyFTL with 2 log blocks on 4 logical blocks of 4 pages, under victim rule `victim`.
    fn toy(victim: &str) -> (Box<dyn Ftl>, Device) {
        let g = Geometry {
            page_bytes: 512,
            spare_bytes: 16,
            pages_per_block: 4,
            logical_blocks: 4,
            sequential_program: true,
        };
        let built =
            crate::ftl::build("tiny", &json!({"log_blocks": 2, "victim": victim}), &g).unwrap();
        let dev = Device::new("tiny", g, 4 + built.extra_blocks, Timing::uniform(1.0));
        (built.ftl, dev)
    }

    /// Fills the data blocks of logical blocks 0-2, then: one page of block 0 to a log block, all four pages
    /// of block 1 to another (a switchable log block, the most recently used), then one page of block 2 with
    /// both log blocks in use. Every page is read back. Returns (switch, full) merges and their copied pages
    /// and erases.
    fn replay(victim: &str) -> [u64; 4] {
        let (mut ftl, mut dev) = toy(victim);
        let mut written = vec![None; 16];
        let mut token = 0;
        let fill = 0..12;
        let overwrites = [0, 4, 5, 6, 7, 8];
        for lpn in fill.chain(overwrites) {
            token += 1;
            ftl.write(Lpn(lpn), token, &mut dev).unwrap();
            written[lpn as usize] = Some(token);
        }
        for (lpn, want) in written.iter().enumerate() {
            assert_eq!(ftl.read(Lpn(lpn as u32), &mut dev).unwrap(), *want);
        }
        let [switch, full] =
            [MergeKind::Switch, MergeKind::Full].map(|k| dev.stats.merges[k as usize]);
        [
            switch.count,
            full.count,
            switch.copied_pages + full.copied_pages,
            switch.erases + full.erases,
        ]
    }

    #[test]
    fn lru_compacts_the_oldest_log_block_with_a_full_merge() {
        // Block 0's log block (1 page) is the least recently used: its 3 data pages and 1 log page are copied
        // to a free block and both old blocks are erased.
        assert_eq!(replay("lru"), [0, 1, 4, 2]);
    }

    #[test]
    fn switchable_compacts_block_1s_full_log_block_with_a_switch() {
        // Block 1's log block holds all four of its pages: it becomes the data block, the old data block is
        // erased, nothing is copied; block 0's log block stays.
        assert_eq!(replay("switchable"), [1, 0, 0, 1]);
    }

    #[test]
    fn switchable_costs_a_bit_per_log_block_list_entry() {
        // On the paper's chip (65,536 blocks, 393 log blocks): 393 x (16 + 9 + 1 + 1) + 2 x 9 = 10,629 bits,
        // 1,329 bytes, against Table I's 1,280 under LRU.
        let g = Geometry {
            page_bytes: 2048,
            spare_bytes: 64,
            pages_per_block: 128,
            logical_blocks: 64_000,
            sequential_program: true,
        };
        let log_list = |victim| {
            let built = crate::ftl::build("tiny", &json!({"victim": victim}), &g).unwrap();
            let ram = built.ftl.ram();
            ram.iter()
                .find(|i| i.name == "log_block_list")
                .unwrap()
                .bytes
        };
        assert_eq!((log_list("lru"), log_list("switchable")), (1_280, 1_329));
    }

    #[test]
    fn switchable_survives_a_mount_and_falls_back_to_lru() {
        // After a mount the switchable log blocks are rebuilt from the chip: the same replay, mounted before
        // the write that needs a victim, still switches block 1.
        let (mut ftl, mut dev) = toy("switchable");
        for (token, lpn) in (0..12).chain([0, 4, 5, 6, 7]).enumerate() {
            ftl.write(Lpn(lpn), token as u64 + 1, &mut dev).unwrap();
        }
        ftl.mount(&mut dev).unwrap();
        let merges = |dev: &Device| {
            [MergeKind::Switch, MergeKind::Full].map(|k| dev.stats.merges[k as usize].count)
        };
        ftl.write(Lpn(8), 100, &mut dev).unwrap();
        assert_eq!(merges(&dev), [1, 0]);
        // No switchable log block left (blocks 0 and 2 hold one page each in theirs): when block 3, filled
        // next, needs a log block, the victim is the least recently used, block 0, by a full merge.
        for (token, lpn) in (101..).zip([12, 13, 14, 15, 12]) {
            ftl.write(Lpn(lpn), token, &mut dev).unwrap();
        }
        assert_eq!(merges(&dev), [1, 1]);
        assert_eq!(ftl.read(Lpn(0), &mut dev).unwrap(), Some(13));
        assert_eq!(ftl.read(Lpn(12), &mut dev).unwrap(), Some(105));
    }
}
