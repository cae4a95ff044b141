//! `nftl`: NFTL (Ban 1999) with the two techniques of Choudhuri & Givargis, "Performance Improvement of
//! Block Based NAND FTL" (CODES+ISSS 2007): §3.1 NFTL, §3.2 lookup table, §3.3 page cache.
//!
//! ```text
//! write(lpn): vb, o := lpn div N, lpn mod N
//!   vb unmapped                  -> primary(vb) := a free block; program o there
//!   page o of primary not valid  -> program o in the primary (§3.1 t3: a spare read of o, or the bitmap)
//!   otherwise (an update)        -> rep := header of the primary (spare read of page 0, or the rep-block table)
//!       no rep   -> take a free block, write its address in the primary's header (a spare program),
//!                   program its page 0
//!       rep full -> fold vb with the new data (below)
//!       else     -> program the rep's next page (its free page pointer), the lpn in the spare area
//! read(lpn):  vb unmapped -> nothing
//!   [lookup table: page-status bit clear -> nothing]        [page cache hit -> read that page]
//!   validity: spare read of primary page o; not valid -> nothing (no lookup table)
//!   rep := header; search rep backwards from its free page pointer, one spare read a page, for lpn
//!   found -> read it; else read primary page o
//! fold(vb):   new := a free block; for o in 0..N: the newest copy (page cache, else the rep block scanned
//!             backwards once, else the primary) is copied to page o of new; erase primary and rep
//! gc:         when a block is needed and only the fold reserve (1) is free: read the header of every
//!             primary in virtual-block order and fold every one that has a replacement block (§3.1:
//!             "folding across all the blocks of flash"); each fold frees one block net
//! ```
//! RAM (counted as the paper does, §5): the block map, 4 B a virtual block (17,408 B for 34 MB of 8 KB
//! blocks). Lookup table: the rep-block table, 4 B a virtual block, and the page-status bitmap, 1 bit a
//! logical page (26,112 B for 34 MB of 8 KB blocks, 17,408 B of 16 KB). Page cache: 8 B an entry (sector 4 B +
//! physical page 4 B); LRU adds two list links of the slot-index width. Not in the paper's figures and reported
//! apart: the free page pointer of each virtual block's replacement block (1 B), and under `sequential_program`
//! the highest programmed page of each primary (1 B).
//! Spare area: every data page holds its logical page number; page 0 of a primary holds the address of its
//! replacement block in the write-once scheme word (`aux`). Under `sequential_program` only, a first write
//! that cannot go in order to the primary goes to the replacement block and clears `WRITTEN` in the
//! primary's page o spare area (one spare program), so that the validity check stays a spare read.
//!
//! Choices where the paper is silent:
//! - Figure 2's request list did not survive the text; its prose fixes the flash operations of each kind:
//!   a write of a mapped block reads the spare area of its page to check validity; an update then reads the
//!   primary's header; every read checks validity and reads the header, then searches backwards (§3.2 lists
//!   the same reads as the ones the lookup table removes, Table 2).
//! - A header read is a spare read of page 0's scheme word ([`Device::read_header`]); the chip keeps that word
//!   with the block's state. The garbage collection's scan of every primary (8,192 of them on 1 GiB of
//!   128 KiB blocks, at every replacement block it takes on a full device) is counted read by read, but the
//!   simulator visits only the primaries its index says have a replacement block, and the chip confirms that
//!   no other block holds a header ([`Device::read_headers_of`]; an index that disagrees with the flash
//!   stops the run). Where a power cut is armed to land within the collection (which then depends on the
//!   order of the reads and folds), it reads the headers one by one, folding as it goes.
//! - No page is ever marked obsolete: the newest copy is the last one in the replacement block, so the
//!   backwards search needs no flag and no spare program is spent on it.
//! - A fold scans the replacement block backwards once, keeping the newest page of each offset in a
//!   ppb-sized scratch (a controller holds the block's spare data while it folds), and stops as soon as the
//!   offsets it still needs are found; the page cache resolves offsets without scanning (§3.3 (ii)). Offsets
//!   not in the replacement block are copied from the primary with `copy` (a page read; an erased page is not
//!   programmed): Table 2 gives the page bitmap no role in folds. The fold issues, offset by offset, the page
//!   cache's lookup, the scan's reads it still needs, then the copy. Where the order does not matter (no
//!   power cut can land in the fold and no timeline times it: `Device::may_reorder`) it
//!   asks the cache for every offset first, scans once down to where the last missed offset is found (the
//!   same reads), and copies a run at a time: the same counts, serial time and chip state
//!   (`tests/array_runs.rs`, `tests/golden_nftl.rs`).
//! - The write that finds its replacement block full is written into the fold, at its offset.
//! - Replacement blocks and primaries come from one FIFO free pool; one block is always kept for a fold.
//! - The lookup table and page cache are copies of spare-area data (§5 "Reliability"): the flash operations
//!   on pages, and every spare program, are the same with or without them; only spare reads differ.
//! - `nftl.spare_reads_avoided`: at every point where the lookup table or a page cache hit replaces spare
//!   reads, the reads plain NFTL would have issued there (computable because they do not change what is
//!   written). It equals plain NFTL's spare reads minus this variant's on the same workload (tested).
//! - Mount (after a power cut; the paper's §5 "Reliability": the tables are copies of spare-area data): every
//!   page's spare area of every block is read. A block holding pages of virtual block `vb` is its primary,
//!   its replacement block, or the target of a fold a cut interrupted. The primary is the block whose page-0
//!   header names a replacement block; that block is its replacement (even if still erased: the header is
//!   write-once) and any other block of `vb` is an unfinished fold target, erased at mount. With no header,
//!   two blocks of `vb` mean a fold that erased the primary but not the replacement: the target (the newer
//!   block) is complete and primary, the old replacement block is erased. The replacement block's free page
//!   pointer is its programmed page count; the page bitmap (lookup table) is rebuilt from the pages found;
//!   the page cache starts empty. A torn page (`torn_pages`: programmed but uncorrectable, no logical page)
//!   counts as programmed (it takes a page of the replacement block's pointer, and a torn primary page is
//!   valid, so its update goes to the replacement block) but holds no data; a block of nothing but torn
//!   pages is erased. Cost: one spare read per page of the scheme's blocks.
//! - `spare_blocks` (default 2): the paper's 34 MB flash is also its sector space (69,632 sectors; a block map
//!   of 4,352 entries), so its free blocks are the virtual blocks the trace never touches (6% for the combo
//!   trace). Two extra blocks are the least that lets a full device fold: one fold target and one
//!   replacement block.
//!
//! On a multi-chip array it runs striped by default (`array/mod.rs`): its block is one physical block on
//! every plane, so successive pages go to successive dies and an erase erases every plane at once.
//! `placement=per-die` runs an instance per die instead, block `lbn` on die `lbn mod dies` (`ftl/per_die.rs`).

use super::common::bounds::Checks;
use super::common::mechanisms::free_pool::FreePool;
use super::common::mechanisms::location_cache::{LocationCache, Policy};
use super::common::mechanisms::merge;
use super::common::structures::bitmap::Bitmap;
use super::{
    address_bytes, defaults_of, parse_as, Built, Extra, Ftl, Mounts, RamItem, Scheme, SchemeParams,
};
use crate::addr::{Lbn, Lpn, Opt, Pbn, Ppn, Token};
use crate::config::ConfigError;
use crate::config::Geometry;
use crate::device::Device;
use crate::device::Result;
use crate::figure::{Figure, Unit};
use crate::stats::{CacheKind, MergeKind};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub const SCHEME: Scheme = Scheme {
    name: "nftl",
    mapping: super::Mapping::Block,
    summary: "NFTL: primary block + one replacement block searched backwards; lookup table and page cache",
    citation: "Choudhuri & Givargis, CODES+ISSS 2007, sections 3.1-3.3 (NFTL: Ban, US 5,937,425)",
    defaults: defaults_of::<NftlParams>,
    parse: parse_as::<NftlParams>,
    build,
    figures: FIGURES,
    profiles: &[],
    stress_variants,
    mount: Some(Mounts {
        variants: crash_variants,
        log_blocks: false,
        settles_torn_merges: false,
    }),
};

/// The report keys of NFTL's own figures and what each means.
pub const FIGURES: &[Figure] = &[
    Figure {
        key: "nftl.spare_reads_avoided",
        unit: Unit::Count,
        description: "spare reads plain NFTL would have issued where the lookup table or a page cache hit replaced them",
        table: false,
    },
    Figure {
        key: "nftl.spare_reads_avoided.lookup_table",
        unit: Unit::Count,
        description: "of nftl.spare_reads_avoided, those the lookup table replaced",
        table: false,
    },
    Figure {
        key: "nftl.spare_reads_avoided.page_cache",
        unit: Unit::Count,
        description: "of nftl.spare_reads_avoided, those a page cache hit replaced",
        table: false,
    },
];

/// The invariant suite's sets: the lookup table, the page cache under both policies, few spare blocks.
fn stress_variants() -> Vec<Value> {
    vec![
        json!({"lookup_table": true}),
        json!({"page_cache": 8}),
        json!({"page_cache": 8, "page_cache_policy": "lru", "lookup_table": true}),
        json!({"spare_blocks": 5, "page_cache": 3}),
    ]
}

/// The crash suites' sets.
fn crash_variants() -> Vec<Value> {
    vec![
        json!({}),
        json!({"lookup_table": true, "page_cache": 8}),
        json!({"spare_blocks": 4}),
    ]
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NftlParams {
    /// Technique 1 (§3.2): rep-block table and page-status bitmap in RAM.
    pub lookup_table: bool,
    /// Technique 2 (§3.3): entries of the page cache, 0 for none; at most one per logical
    /// page (`common/bounds.rs`).
    pub page_cache: u32,
    /// "fifo" (the paper's simple replacement) or "lru".
    pub page_cache_policy: String,
    /// Physical blocks beyond the logical ones (at least 2; at most `common/bounds.rs`'s limit).
    pub spare_blocks: u32,
}

impl Default for NftlParams {
    fn default() -> Self {
        NftlParams {
            lookup_table: false,
            page_cache: 0,
            page_cache_policy: "fifo".into(),
            spare_blocks: 2,
        }
    }
}

/// Flag bit of a primary's page: written at least once although its data went to the replacement block.
const WRITTEN: u8 = 0x01;

pub struct NftlFtl {
    ppb: u32,
    logical_blocks: u32,
    /// Physical blocks the scheme uses: the logical ones and `spare_blocks`.
    blocks: u32,
    sequential_program: bool,
    lookup_table: bool,
    primary: Vec<Opt<Pbn>>,
    /// Replacement block of each virtual block. With the lookup table this is the rep-block table; without it
    /// decisions read the primary's header from flash, and this copy only prices the reads a hit avoided.
    rep: Vec<Opt<Pbn>>,
    /// Free page pointer of each virtual block's replacement block.
    rep_fill: Vec<u32>,
    /// One past the highest programmed page of each primary (the in-order rule's frontier).
    frontier: Vec<u32>,
    /// Page-status bitmap (lookup table only).
    written: Bitmap,
    free: FreePool,
    cache: LocationCache,
    cache_policy: Policy,
    /// Virtual blocks that have a replacement block: an index of `rep` for the garbage collection (simulator
    /// state, not in `ram()`; plain NFTL learns it from the headers, which the chip confirms).
    has_rep: Bitmap,
    /// Virtual blocks that have a primary: the headers the garbage collection reads.
    primaries: u32,
    /// Garbage collection scratch: the virtual blocks to fold and their primaries.
    gc_folds: Vec<usize>,
    gc_holders: Vec<Pbn>,
    /// Fold scratch: newest replacement page of each offset.
    newest: Vec<Opt<u32>>,
    /// Fold scratch: the page each offset is copied from, where the copies wait for the scan.
    sources: Vec<Opt<Ppn>>,
    /// Fold scratch: the offsets the page cache did not resolve, where the scan waits for the cache.
    missed: Vec<bool>,
    avoided_by_table: u64,
    avoided_by_cache: u64,
}

fn build(params: &SchemeParams, g: &Geometry) -> Result<Built, ConfigError> {
    let p: &NftlParams = params.get("nftl")?;
    let mut checks = Checks::new("nftl");
    checks
        .at_least(
            "spare_blocks",
            p.spare_blocks as u64,
            2,
            "a full device needs one fold target and one replacement block",
        )
        .extra_blocks("spare_blocks", p.spare_blocks, 0, 0, g)
        .cache_entries("page_cache", p.page_cache, g);
    let policy = match p.page_cache_policy.as_str() {
        "fifo" => Policy::Fifo,
        "lru" => Policy::Lru,
        other => {
            checks.problem(
                "page_cache_policy",
                other,
                "is not a policy: \"fifo\" or \"lru\"",
                Some("fifo".into()),
            );
            Policy::Fifo
        }
    };
    checks.finish()?;
    let lb = g.logical_blocks as usize;
    let ftl = NftlFtl {
        ppb: g.pages_per_block,
        logical_blocks: g.logical_blocks,
        blocks: g.logical_blocks + p.spare_blocks,
        sequential_program: g.sequential_program,
        lookup_table: p.lookup_table,
        primary: vec![Opt::NONE; lb],
        rep: vec![Opt::NONE; lb],
        rep_fill: vec![0; lb],
        frontier: vec![0; lb],
        has_rep: Bitmap::new(lb),
        primaries: 0,
        gc_folds: Vec::new(),
        gc_holders: Vec::new(),
        written: if p.lookup_table {
            Bitmap::new(g.logical_pages() as usize)
        } else {
            Bitmap::new(0)
        },
        free: FreePool::with_range(Pbn(0), g.logical_blocks + p.spare_blocks),
        cache: LocationCache::new(p.page_cache, g.logical_pages(), policy),
        cache_policy: policy,
        newest: vec![Opt::NONE; g.pages_per_block as usize],
        sources: vec![Opt::NONE; g.pages_per_block as usize],
        missed: vec![false; g.pages_per_block as usize],
        avoided_by_table: 0,
        avoided_by_cache: 0,
    };
    Ok(Built {
        ftl: Box::new(ftl),
        extra_blocks: p.spare_blocks,
    })
}

impl Ftl for NftlFtl {
    /// The rest of a virtual block with no primary block.
    fn unmapped_from(&self, lpn: Lpn, pages: u32) -> u32 {
        match self.primary[lpn.lbn(self.ppb).index()].get() {
            None => lpn.left_in_block(self.ppb).min(pages),
            Some(_) => 0,
        }
    }

    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>> {
        let (vb, o) = (lpn.lbn(self.ppb).index(), lpn.offset(self.ppb));
        let Some(pbn) = self.primary[vb].get() else {
            return Ok(None);
        };
        if self.lookup_table {
            // The validity check (Table 2, page bitmap, Read).
            self.avoided_by_table += 1;
            if !self.is_written(lpn) {
                return Ok(None);
            }
        }
        if self.cache.enabled() {
            let hit = self.cache.get(lpn);
            dev.record_cache(CacheKind::PageCache, hit.is_some());
            if let Some(ppn) = hit {
                if self.lookup_table {
                    // The header the rep-block table would have answered.
                    self.avoided_by_table += 1;
                } else {
                    self.avoided_by_cache += 2;
                }
                self.avoided_by_cache += self.search_cost(vb, ppn);
                return dev.read_token(ppn);
            }
        }
        if !self.lookup_table && !self.valid_on_flash(pbn, o, dev)? {
            return Ok(None);
        }
        if let Some(rep) = self.replacement_of(vb, dev)? {
            for p in (0..self.rep_fill[vb]).rev() {
                let at = dev.ppn(rep, p);
                if dev.read_spare(at)?.lpn() == Some(lpn) {
                    return dev.read_token(at);
                }
            }
        }
        dev.read_token(dev.ppn(pbn, o))
    }

    fn write(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        let (vb, o) = (lpn.lbn(self.ppb).index(), lpn.offset(self.ppb));
        let Some(pbn) = self.primary[vb].get() else {
            let pbn = self.take_block(dev)?;
            self.primary[vb] = Opt::some(pbn);
            self.primaries += 1;
            return self.program_primary(vb, pbn, o, lpn, token, dev);
        };
        let valid = if self.lookup_table {
            self.avoided_by_table += 1;
            self.is_written(lpn)
        } else {
            self.valid_on_flash(pbn, o, dev)?
        };
        let in_order = !self.sequential_program || o >= self.frontier[vb];
        if !valid && in_order {
            return self.program_primary(vb, pbn, o, lpn, token, dev);
        }
        if !valid {
            // sequential_program: a first write below the primary's frontier goes to the replacement block;
            // the primary's spare area still records that the page is written.
            dev.program_spare(dev.ppn(pbn, o), None, WRITTEN)?;
        }
        self.set_written(lpn);
        let rep = match self.replacement_of(vb, dev)? {
            Some(rep) => rep,
            None => {
                let rep = self.take_block(dev)?;
                dev.program_spare(dev.ppn(pbn, 0), Some(rep.0), 0)?;
                self.rep[vb] = Opt::some(rep);
                self.has_rep.set(vb);
                self.rep_fill[vb] = 0;
                rep
            }
        };
        if self.rep_fill[vb] == self.ppb {
            return self.fold(vb, Some((o, token)), dev);
        }
        let at = dev.ppn(rep, self.rep_fill[vb]);
        dev.program(at, token, lpn)?;
        self.rep_fill[vb] += 1;
        self.cache.put(lpn, at);
        Ok(())
    }

    fn ram(&self) -> Vec<RamItem> {
        let lb = self.logical_blocks as u64;
        let pages = lb * self.ppb as u64;
        let pointer = address_bytes(self.ppb as u64 + 1);
        let mut items = vec![RamItem::new(
            "block_map",
            lb * 4,
            format!("{lb} virtual blocks x 4 B (NFTL paper section 5)"),
        )];
        if self.lookup_table {
            items.push(RamItem::new(
                "rep_block_table",
                lb * 4,
                format!("{lb} virtual blocks x 4 B (section 3.2)"),
            ));
            items.push(RamItem::new(
                "page_status_bitmap",
                pages.div_ceil(8),
                format!("{pages} logical pages x 1 bit (section 3.2)"),
            ));
        }
        if self.cache.enabled() {
            let entries = self.cache.capacity() as u64;
            let (entry, layout) = match self.cache_policy {
                Policy::Fifo => (8, "sector 4 B + physical page 4 B".to_string()),
                Policy::Lru => {
                    let link = address_bytes(entries + 1);
                    (
                        8 + 2 * link,
                        format!("sector 4 B + physical page 4 B + 2 LRU links x {link} B"),
                    )
                }
            };
            items.push(RamItem::new(
                "page_cache",
                entries * entry,
                format!("{entries} entries x {entry} B ({layout})"),
            ));
        }
        items.push(RamItem::new(
            "free_page_pointer",
            lb * pointer,
            format!("{lb} virtual blocks x {pointer} B (the replacement block's next page; not in the paper's figures)"),
        ));
        if self.sequential_program {
            items.push(RamItem::new(
                "primary_frontier",
                lb * pointer,
                format!("{lb} virtual blocks x {pointer} B (in-order rule)"),
            ));
        }
        items
    }

    fn reset_counters(&mut self) {
        self.avoided_by_table = 0;
        self.avoided_by_cache = 0;
    }

    fn detects_torn_pages(&self) -> bool {
        true
    }

    fn mount(&mut self, dev: &mut Device) -> Result<()> {
        let (lb, ppb) = (self.logical_blocks as usize, self.ppb);
        self.primary.fill(Opt::NONE);
        self.rep.fill(Opt::NONE);
        self.has_rep.clear_all();
        self.primaries = 0;
        self.rep_fill.fill(0);
        self.frontier.fill(0);
        self.written.clear_all();
        self.cache = LocationCache::new(
            self.cache.capacity(),
            self.logical_blocks * ppb,
            self.cache_policy,
        );
        // What the scan finds of each block: its virtual block, newest sequence number, programmed pages,
        // highest programmed offset + 1, and the replacement block its page-0 header names.
        struct Found {
            vb: Option<usize>,
            seq: u32,
            pages: u32,
            end: u32,
            header: Option<u32>,
            /// Torn pages (`torn_pages`): programmed, but uncorrectable.
            torn: Vec<u32>,
        }
        let mut found: Vec<Found> = Vec::with_capacity(self.blocks as usize);
        let mut claims: Vec<Vec<u32>> = vec![Vec::new(); lb];
        for pbn in 0..self.blocks {
            let mut f = Found {
                vb: None,
                seq: 0,
                pages: 0,
                end: 0,
                header: None,
                torn: Vec::new(),
            };
            let mut flagged = Vec::new();
            for o in 0..ppb {
                let spare = dev.read_spare(dev.ppn(Pbn(pbn), o))?;
                if o == 0 {
                    f.header = spare.aux();
                }
                if spare.seq != 0 {
                    f.pages += 1;
                    f.end = o + 1;
                }
                if let Some(lpn) = spare.lpn() {
                    f.vb = Some(lpn.lbn(ppb).index());
                    f.seq = f.seq.max(spare.seq);
                    if self.lookup_table {
                        self.set_written(lpn);
                    }
                } else if spare.seq != 0 {
                    f.torn.push(o);
                } else if spare.flags & WRITTEN == 0 {
                    // A first write that went to the replacement block (sequential_program).
                    flagged.push(o);
                }
            }
            if let Some(vb) = f.vb {
                claims[vb].push(pbn);
                if self.lookup_table {
                    for o in flagged {
                        self.set_written(Lbn(vb as u32).lpn(o, ppb));
                    }
                }
            }
            found.push(f);
        }
        let mut in_use = Bitmap::new(self.blocks as usize);
        for (vb, blocks) in claims.iter().enumerate() {
            let primary = blocks
                .iter()
                .copied()
                .find(|&b| found[b as usize].header.is_some())
                .or_else(|| {
                    blocks
                        .iter()
                        .copied()
                        .max_by_key(|&b| found[b as usize].seq)
                });
            let Some(primary) = primary else { continue };
            let rep = found[primary as usize].header;
            for &b in blocks {
                if b != primary && Some(b) != rep {
                    dev.erase(Pbn(b))?;
                }
            }
            self.primary[vb] = Opt::some(Pbn(primary));
            self.primaries += 1;
            self.frontier[vb] = found[primary as usize].end;
            if self.lookup_table {
                // A torn page of the primary cannot be programmed in place again: its page counts as written.
                for &o in &found[primary as usize].torn {
                    self.set_written(Lbn(vb as u32).lpn(o, ppb));
                }
            }
            in_use.set(primary as usize);
            if let Some(rep) = rep {
                self.rep[vb] = Opt::some(Pbn(rep));
                self.has_rep.set(vb);
                self.rep_fill[vb] = found[rep as usize].pages;
                in_use.set(rep as usize);
            }
        }
        self.free = FreePool::with_range(Pbn(0), 0);
        for pbn in 0..self.blocks {
            if !in_use.get(pbn as usize) {
                if found[pbn as usize].pages > 0 && found[pbn as usize].vb.is_none() {
                    dev.erase(Pbn(pbn))?;
                }
                self.free.put(Pbn(pbn));
            }
        }
        Ok(())
    }

    fn extra(&self, out: &mut Extra) {
        let total = self.avoided_by_table + self.avoided_by_cache;
        out.push(("nftl.spare_reads_avoided".into(), total.into()));
        out.push((
            "nftl.spare_reads_avoided.lookup_table".into(),
            self.avoided_by_table.into(),
        ));
        out.push((
            "nftl.spare_reads_avoided.page_cache".into(),
            self.avoided_by_cache.into(),
        ));
    }
}

impl NftlFtl {
    fn is_written(&self, lpn: Lpn) -> bool {
        self.written.is_empty() || self.written.get(lpn.index())
    }

    fn set_written(&mut self, lpn: Lpn) {
        if !self.written.is_empty() {
            self.written.set(lpn.index());
        }
    }

    /// The validity check of §3.1 (t3): one spare read of the primary's page.
    fn valid_on_flash(&self, pbn: Pbn, o: u32, dev: &mut Device) -> Result<bool> {
        let spare = dev.read_spare(dev.ppn(pbn, o))?;
        // Programmed (a torn page too: it cannot be programmed again), or flagged as written elsewhere.
        Ok(spare.seq != 0 || spare.flags & WRITTEN == 0)
    }

    /// The replacement block of `vb`: the rep-block table, or the primary's header (one spare read).
    #[inline]
    fn replacement_of(&mut self, vb: usize, dev: &mut Device) -> Result<Option<Pbn>> {
        if self.lookup_table {
            self.avoided_by_table += 1;
            return Ok(self.rep[vb].get());
        }
        let primary = self.primary[vb]
            .get()
            .expect("a virtual block with a primary");
        let header = dev.read_header(primary)?.map(Pbn);
        debug_assert_eq!(header.is_none(), self.rep[vb].is_none());
        Ok(header)
    }

    /// Spare reads a backwards search of `vb`'s replacement block spends before it settles on `found`.
    fn search_cost(&self, vb: usize, found: Ppn) -> u64 {
        let Some(rep) = self.rep[vb].get() else {
            return 0;
        };
        let fill = self.rep_fill[vb] as u64;
        if found.block(self.ppb) == rep {
            fill - found.offset(self.ppb) as u64
        } else {
            fill
        }
    }

    fn program_primary(
        &mut self,
        vb: usize,
        pbn: Pbn,
        o: u32,
        lpn: Lpn,
        token: Token,
        dev: &mut Device,
    ) -> Result<()> {
        let at = dev.ppn(pbn, o);
        dev.program(at, token, lpn)?;
        self.frontier[vb] = self.frontier[vb].max(o + 1);
        self.set_written(lpn);
        self.cache.put(lpn, at);
        Ok(())
    }

    /// A free block for a primary or a replacement block, keeping one for folds; garbage collection first if
    /// only that one is left.
    fn take_block(&mut self, dev: &mut Device) -> Result<Pbn> {
        if self.free.len() <= 1 {
            self.collect_garbage(dev)?;
        }
        if self.free.len() <= 1 {
            return Err(dev.out_of_space("no free block after garbage collection"));
        }
        Ok(self.free.take().expect("checked above"))
    }

    /// §3.1: fold every primary that has a replacement block, in virtual-block order. Those are found by
    /// reading every primary's header (or the rep-block table). The simulator takes them from its index
    /// `has_rep` and has the chip confirm the scan in one call ([`Device::read_headers_of`]: the same counts
    /// and times; an index that disagrees with the flash stops the run), and reads header by header, folding
    /// as it goes, where the order matters (a power cut armed to land within this collection) or with bad
    /// blocks.
    fn collect_garbage(&mut self, dev: &mut Device) -> Result<()> {
        let mark = dev.begin_gc();
        let mut folds = std::mem::take(&mut self.gc_folds);
        folds.clear();
        folds.extend(self.has_rep.iter_ones());
        let known = if self.lookup_table {
            // The table lookup of every primary (`replacement_of`).
            self.avoided_by_table += self.primaries as u64;
            true
        } else {
            let mut holders = std::mem::take(&mut self.gc_holders);
            holders.clear();
            holders.extend(folds.iter().map(|&vb| {
                self.primary[vb]
                    .get()
                    .expect("a virtual block with a replacement block has a primary")
            }));
            // The scan and the folds: a fold does at most a spare read, a read and a program a page, and
            // two erases.
            let scanned = self.primaries as u64;
            let span = scanned + holders.len() as u64 * (3 * self.ppb as u64 + 2);
            let known = dev.read_headers_of(scanned, &holders, span);
            self.gc_holders = holders;
            known?
        };
        if known {
            for &vb in &folds {
                self.fold(vb, None, dev)?;
            }
        } else {
            for vb in 0..self.logical_blocks as usize {
                if self.primary[vb].is_some() && self.replacement_of(vb, dev)?.is_some() {
                    self.fold(vb, None, dev)?;
                }
            }
        }
        self.gc_folds = folds;
        dev.end_gc(mark);
        Ok(())
    }

    /// Copies the newest page of every offset of `vb` (or `new` data at its offset) into a free block and
    /// erases the primary and its replacement block.
    fn fold(&mut self, vb: usize, new: Option<(u32, Token)>, dev: &mut Device) -> Result<()> {
        let mark = dev.begin_merge();
        let old = self.primary[vb]
            .get()
            .expect("a folded virtual block has a primary");
        let rep = self.rep[vb]
            .get()
            .expect("a folded virtual block has a replacement block");
        let target = self
            .free
            .take()
            .ok_or_else(|| dev.out_of_space("no free block to fold into"))?;
        let fill = self.rep_fill[vb];
        self.newest.fill(Opt::NONE);
        let mut cursor = fill;
        let mut cached_depth = 0u64;
        let mut frontier = 0;
        // Where the device lets the fold's operations be reordered, the page cache is asked for every offset
        // first, the replacement block is then scanned once for all the offsets it missed (down to where the
        // scan offset by offset would have stopped: where the last of them is found), and the copies go in
        // runs (`merge::fill`).
        let defer = dev.may_reorder(fill as u64 + 2 * self.ppb as u64);
        let mut missed = 0;
        self.missed.fill(false);
        for o in 0..self.ppb {
            let lpn = Lbn(vb as u32).lpn(o, self.ppb);
            let to = dev.ppn(target, o);
            if let Some((new_o, token)) = new {
                if new_o == o {
                    if !defer {
                        dev.program(to, token, lpn)?;
                        frontier = o + 1;
                    }
                    self.cache.put(lpn, to);
                    continue;
                }
            }
            let cached = if self.cache.enabled() {
                let hit = self.cache.get(lpn);
                dev.record_cache(CacheKind::PageCache, hit.is_some());
                hit
            } else {
                None
            };
            let from = match cached {
                Some(ppn) => {
                    cached_depth = cached_depth.max(self.search_cost(vb, ppn));
                    ppn
                }
                None if defer => {
                    self.missed[o as usize] = true;
                    missed += 1;
                    continue;
                }
                None => {
                    while self.newest[o as usize].is_none() && cursor > 0 {
                        cursor -= 1;
                        let spare = dev.read_spare(dev.ppn(rep, cursor))?;
                        if let Some(at) = spare.lpn() {
                            let at = at.offset(self.ppb) as usize;
                            if self.newest[at].is_none() {
                                self.newest[at] = Opt::some(cursor);
                            }
                        }
                    }
                    self.newest_copy(o, old, rep, dev)
                }
            };
            if defer {
                self.sources[o as usize] = Opt::some(from);
            } else if dev.copy(from, to)?.is_some() {
                self.cache.relocate(lpn, to);
                frontier = o + 1;
            }
        }
        if defer {
            if missed > 0 {
                cursor = self.scan_for_missed(rep, fill, missed, dev)?;
            }
            for o in 0..self.ppb {
                if self.missed[o as usize] {
                    self.sources[o as usize] = Opt::some(self.newest_copy(o, old, rep, dev));
                }
            }
            // The copies and the new data's program in offset order, each run of offsets in one call.
            let (sources, cache, ppb) = (&self.sources, &mut self.cache, self.ppb);
            let first_page = dev.ppn(target, 0);
            merge::fill(dev, Lbn(vb as u32), target, 0..0, sources, new, |r| {
                for o in r.clone() {
                    cache.relocate(Lbn(vb as u32).lpn(o, ppb), Ppn(first_page.0 + o));
                }
                frontier = r.end;
            })?;
        }
        let scanned = (fill - cursor) as u64;
        self.avoided_by_cache += cached_depth.saturating_sub(scanned);
        for pbn in [old, rep] {
            dev.erase(pbn)?;
            self.free.put(pbn);
        }
        self.primary[vb] = Opt::some(target);
        self.rep[vb] = Opt::NONE;
        self.has_rep.clear(vb);
        self.rep_fill[vb] = 0;
        self.frontier[vb] = frontier;
        dev.end_merge(mark, MergeKind::Fold);
        Ok(())
    }

    /// Where a fold copies offset `o` from: its newest page in the replacement block `rep` as far as the scan
    /// found, else the primary's page.
    fn newest_copy(&self, o: u32, old: Pbn, rep: Pbn, dev: &Device) -> Ppn {
        match self.newest[o as usize].get() {
            None => dev.ppn(old, o),
            Some(p) => dev.ppn(rep, p),
        }
    }

    /// The fold's scan of `rep` backwards from `fill` in one call to the device, noting the newest page of
    /// each offset, until the `missed` offsets the page cache did not resolve are all found (or the block's
    /// first page is read): the reads the scan offset by offset makes. Returns where it stopped.
    fn scan_for_missed(
        &mut self,
        rep: Pbn,
        fill: u32,
        missed: u32,
        dev: &mut Device,
    ) -> Result<u32> {
        let (newest, wanted, ppb) = (&mut self.newest, &self.missed, self.ppb);
        let mut left = missed;
        dev.scan_spare_lpns_down(rep, fill, |at, lpn| {
            if let Some(lpn) = lpn.get() {
                let o = lpn.offset(ppb) as usize;
                if newest[o].is_none() {
                    newest[o] = Opt::some(at);
                    left -= wanted[o] as u32;
                }
            }
            left > 0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{BadBlockOptions, Timing};
    use crate::device::CutPoint;
    use crate::device::FlashError;
    use crate::stats::{Cause, FlashCounts};

    /// NFTL on 16 blocks of 4 pages and its 2 spare blocks: once full, a garbage collection at nearly every
    /// replacement block. `one_by_one`: the collection never reads the headers in one call.
    fn toy(params: Value, one_by_one: bool) -> (Box<dyn Ftl>, Device) {
        toy_on(params, one_by_one, None)
    }

    /// [`toy`] on a chip with bad blocks, if given.
    fn toy_on(
        params: Value,
        one_by_one: bool,
        bad: Option<BadBlockOptions>,
    ) -> (Box<dyn Ftl>, Device) {
        let g = Geometry {
            page_bytes: 512,
            spare_bytes: 16,
            pages_per_block: 4,
            logical_blocks: 16,
            sequential_program: false,
        };
        let built = crate::ftl::build("nftl", &params, &g).unwrap();
        let (blocks, timing) = (16 + built.extra_blocks, Timing::uniform(1.0));
        let mut dev = match bad {
            None => Device::new("nftl", g, blocks, timing),
            Some(opts) => Device::with_bad_blocks("nftl", g, blocks, timing, opts).unwrap(),
        };
        dev.headers_one_by_one = one_by_one;
        (built.ftl, dev)
    }

    /// 3,000 writes (index, logical page): the toy's 64 pages in order, then random overwrites.
    fn writes() -> impl Iterator<Item = (u64, usize)> {
        (0..3000u64).scan(1u64, |x, i| {
            *x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            Some((i, if i < 64 { i } else { (*x >> 33) % 64 } as usize))
        })
    }

    /// The writes on the toy, every one read back, a mount halfway: the flash counts by cause, the folds and
    /// the garbage collections.
    fn overwrite(params: Value, one_by_one: bool) -> ([FlashCounts; Cause::COUNT], u64, u64) {
        overwrite_on(params, one_by_one, None).0
    }

    /// [`overwrite`] on a chip with bad blocks, if given, and the chip: the counts, folds and collections.
    fn overwrite_on(
        params: Value,
        one_by_one: bool,
        bad: Option<BadBlockOptions>,
    ) -> (([FlashCounts; Cause::COUNT], u64, u64), Device) {
        let (mut ftl, mut dev) = toy_on(params, one_by_one, bad);
        for (i, lpn) in writes() {
            let lpn = Lpn(lpn as u32);
            ftl.write(lpn, i + 1, &mut dev).unwrap();
            assert_eq!(ftl.read(lpn, &mut dev).unwrap(), Some(i + 1));
            if i == 1500 {
                // RAM rebuilt from the spare areas, the index of replacement blocks with it.
                ftl.mount(&mut dev).unwrap();
            }
        }
        let folds = dev.stats.merges[MergeKind::Fold as usize].count;
        ((dev.counts_by_cause(), folds, dev.stats.gc_runs), dev)
    }

    /// The writes on the toy with torn pages on and a power cut every `cut_every` flash operations (a mount after
    /// each, the write it cut not checked until written again): the cut points and flash counts by cause.
    fn overwrite_with_cuts(
        params: Value,
        one_by_one: bool,
        cut_every: u64,
    ) -> (Vec<CutPoint>, [FlashCounts; Cause::COUNT]) {
        let (mut ftl, mut dev) = toy(params, one_by_one);
        dev.set_torn_pages(true);
        dev.arm_power_cut(Some(cut_every));
        let mut cuts = Vec::new();
        let mut last = [None; 64];
        for (i, lpn) in writes() {
            let mut survive = |at, ftl: &mut Box<dyn Ftl>, dev: &mut Device| {
                cuts.push(at);
                ftl.mount(dev).unwrap();
                dev.arm_power_cut(Some(cut_every));
            };
            match ftl.write(Lpn(lpn as u32), i + 1, &mut dev) {
                Ok(()) => last[lpn] = Some(i + 1),
                Err(FlashError::PowerCut(at)) => {
                    survive(at, &mut ftl, &mut dev);
                    last[lpn] = None;
                }
                Err(e) => panic!("{e}"),
            }
            if let Some(token) = last[lpn] {
                match ftl.read(Lpn(lpn as u32), &mut dev) {
                    Ok(got) => assert_eq!(got, Some(token)),
                    Err(FlashError::PowerCut(at)) => survive(at, &mut ftl, &mut dev),
                    Err(e) => panic!("{e}"),
                }
            }
        }
        (cuts, dev.counts_by_cause())
    }

    #[test]
    fn power_cuts_land_on_the_same_operations_whichever_way_the_headers_are_read() {
        for cut_every in [97, 1009] {
            let scanned = overwrite_with_cuts(json!({}), false, cut_every);
            let one_by_one = overwrite_with_cuts(json!({}), true, cut_every);
            assert!(scanned.0.len() > 20, "{} cuts", scanned.0.len());
            assert!(scanned.0.iter().any(|c| c.open_marks > 0));
            assert_eq!(scanned, one_by_one, "a cut every {cut_every} operations");
        }
    }

    #[test]
    fn the_confirmed_header_scan_counts_what_reading_every_header_counts() {
        for params in [
            json!({}),
            json!({"lookup_table": true}),
            json!({"page_cache": 8}),
        ] {
            let scanned = overwrite(params.clone(), false);
            let one_by_one = overwrite(params.clone(), true);
            assert_eq!(scanned, one_by_one, "{params}");
            let (by_cause, folds, gc_runs) = scanned;
            assert!(
                gc_runs > 500 && folds >= gc_runs,
                "{params}: {gc_runs} runs, {folds} folds"
            );
            // Plain NFTL reads the 16 primaries' headers at every collection (a full device).
            if params == json!({}) {
                assert!(by_cause[Cause::Gc as usize].spare_reads >= 16 * gc_runs);
            }
        }
    }

    /// With blocks remapped around bad ones, the scan goes through the map in one call too: factory bad blocks,
    /// and blocks that wear out, some of them primaries whose failed erase left their header on the chip.
    #[test]
    fn the_confirmed_header_scan_counts_the_same_with_bad_blocks() {
        let bad = BadBlockOptions {
            ratio: 0.1,
            endurance: Some(320),
            reserve: 14,
            seed: 3,
        };
        let (scanned, dev) = overwrite_on(json!({}), false, Some(bad));
        let (one_by_one, _) = overwrite_on(json!({}), true, Some(bad));
        assert_eq!(scanned, one_by_one);
        let (_, _, gc_runs) = scanned;
        assert!(gc_runs > 500, "{gc_runs} runs");
        assert!(dev.chip().bad_headers() >= 1, "no bad block kept a header");
    }
}
