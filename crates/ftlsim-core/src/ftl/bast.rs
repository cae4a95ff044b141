//! `bast`: the log block scheme of Kim et al. 2002 (block-associative sector translation), as the FAST paper
//! describes it in §2.2, with the victim selection §3.7 assumes and, optionally, the partial merge of §3.4.
//!
//! ```text
//! write(lpn): lbn, offset := lpn div N, lpn mod N
//!   the data block can take the page in place (no collision)  -> program it there
//!   lbn has a log block with a free page                       -> append the page to it
//!   lbn has a full log block                                   -> reclaim it (victim rule 1), retry the write
//!   lbn has no log block: if no log slot is free, reclaim a victim:
//!       (2) a log block that can be switched (full, offsets 0..N-1 in place), else (3) round robin;
//!       then take a free block as lbn's log block and append the page
//! reclaim(log block of lbn):
//!   full and in place               -> switch: it becomes the data block; erase the old data block
//!   partial_merge and in place 0..k -> partial merge: copy pages k..N-1 from the data block into it; it becomes
//!                                      the data block; erase the old data block
//!   otherwise                       -> full merge: newest of each page (log, else data) to a free block;
//!                                      erase the data block and the log block
//! read(lpn):  newest copy in lbn's log block, else the data block's page
//! ```
//! RAM, as the TinyFTL paper counts the Logblock FTL (§VI.B, Table IV: 281,984 bytes for its 16 GB device
//! with 393 log blocks): the block map over every block of the chip, each entry as wide as a physical block
//! address (65,536 x 2 B), and per log block a page map of one chip page address per page (128 x 3 B); see
//! [`logblock_ram`]. Not counted, to match that figure: the written bit per logical page and the in-order
//! frontier the collision test uses (a controller would read the page's spare area instead; the simulator
//! charges nothing for that check, as the FAST paper does not).
//! Spare area: the logical page number and the chip's sequence number; log pages also carry the scheme word
//! `SEQ_LOG_AUX` (written with the page, no extra operation), so that a mount tells a log block from a data
//! block or a merge target. Mount (in the manner of FAST §3.2's rebuild from spare areas): one spare read per
//! page of the data and log blocks (`(physical blocks - map blocks) x pages per block`; 7 x 4 = 28 for 4
//! logical blocks and 2 log blocks), then each logical block's blocks get their roles
//! (`common/mechanisms/boot_scan.rs`): a full or partial merge the cut interrupted is finished (the target's missing
//! pages copied from their newest copies, the replaced blocks erased), log blocks take slots in the order
//! they were opened, the round-robin cursor restarts at the oldest. `logblock-zoned` then finds its map
//! blocks by their spare areas (up to the first erased page), erases those holding pages and writes every
//! zone's map pages afresh from the rebuilt map (map-class operations; the map pages hold nothing the
//! spare areas do not). Torn pages (`torn_pages`: a program cut by the power loss, no logical page in its
//! spare area; `boot_scan::settle_torn`): a block of torn pages only is erased; in a log block a torn page
//! is a hole of its appends (the next append goes past it, and the block is no longer in place, so it is
//! fully merged), and so are the erased pages before it when it is a partial merge's first copy (the merge
//! skips the offsets it has no page for, so the copy lands past them); in a data block it is a write in
//! place cut, its offset taken and read as nothing, unless the blocks a merge replaces are still there (the
//! old data block holds a page the target lacks, or an untagged one): a full merge whose target holds one
//! is undone (the target erased: the data and log blocks still hold every page); a partial merge whose
//! target (the log block) holds one is redone into a free block. Extra physical blocks: `log_blocks` + 1
//! (the free block a full merge copies into), and by default at least the TinyFTL paper's 24 in every 1,024
//! so that BAST, TinyFTL and the Superblock FTL run on the same chip; blocks beyond those BAST uses stay in
//! the free pool. A run that states its spare capacity (`extra_blocks`) may give fewer, down to
//! `log_blocks` + 1 (and the map blocks).
//!
//! `logblock-zoned` (TinyFTL paper §II, §VI.B): the same scheme with its block map kept in map blocks and
//! loaded one zone of `zone_blocks` logical blocks at a time ([`ZoneMap`]). A request to another zone
//! flushes the loaded zone's map if it changed (12 KB, 6 page programs, on the paper's device) and loads the
//! new zone's (6 page reads); a merge that remaps a logical block of a zone not loaded rewrites the one map
//! page holding its entry (a page read and a page program). RAM: the loaded zone's map (6,144 x 2 B =
//! 12,288, Table IV's figure) plus the log blocks' page maps, which the paper's figure leaves out but a
//! working Logblock needs in RAM all the same; both are reported.
//!
//! Choices where the paper is silent: log blocks are taken lazily from a FIFO free pool (erased blocks, so
//! taking one costs no erase); victim rule (2) scans the slots from the round-robin cursor and does not move
//! it, rule (3) takes the cursor's slot and advances it; after a logical block's own full log block is
//! reclaimed the write is retried from the start (on a partly written device it may now fit in place); a
//! replaced log block's utilization is recorded at every reclaim (Fig. 4).
//!
//! On a multi-chip array it runs striped by default (`array/mod.rs`): its block is one physical block on
//! every plane, so successive pages go to successive dies and an erase erases every plane at once.
//! `placement=per-die` runs an instance per die instead, block `lbn` on die `lbn mod dies` (`ftl/per_die.rs`).

use super::common::bounds::{layout_extra_blocks, Checks};
use super::common::logblock_ram::{logblock_ram, paper_chip_blocks, zoned_ram};
use super::common::mechanisms::boot_scan::{
    finish_merge, is_torn, mount_bug, scan_block, settle_torn, Extent, InPlace,
};
use super::common::mechanisms::data_blocks::DataBlocks;
use super::common::mechanisms::free_pool::FreePool;
use super::common::mechanisms::log_blocks::LogBlocks;
use super::common::mechanisms::merge;
use super::common::mechanisms::seq_logs::SEQ_LOG_AUX;
use super::common::mechanisms::zone_map::ZoneMap;
use super::{
    address_bytes, defaults_of, parse_as, Built, Ftl, Mounts, RamItem, Scheme, SchemeParams,
};
use crate::addr::{Lbn, Lpn, Opt, Pbn, Ppn, Token};
use crate::config::ConfigError;
use crate::config::Geometry;
use crate::device::Device;
use crate::device::Result;
use crate::sparse::SparseVec;
use crate::stats::MergeKind;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub const SCHEME: Scheme = Scheme {
    name: "bast",
    mapping: super::Mapping::Block,
    summary: "log block scheme: one log block per logical block, switch and full merges",
    citation:
        "Kim et al. 2002, as described in the FAST paper (Lee et al. 2007) sections 2.2, 2.4, 3.7",
    defaults: defaults_of::<BastParams>,
    parse: parse_as::<BastParams>,
    build: build_bast,
    figures: &[],
    profiles: &[],
    stress_variants,
    mount: Some(Mounts {
        variants: crash_variants,
        log_blocks: true,
        settles_torn_merges: true,
    }),
};

pub const ZONED: Scheme = Scheme {
    name: "logblock-zoned",
    mapping: super::Mapping::Block,
    summary: "BAST with its block map on flash, loaded one zone at a time (zone switching)",
    citation: "TinyFTL paper (Lee et al.) sections II and VI.B, Table IV",
    defaults: zoned_defaults,
    parse: parse_as::<BastParams>,
    build: build_zoned,
    figures: &[],
    profiles: &[],
    stress_variants: zoned_stress_variants,
    mount: Some(Mounts {
        variants: zoned_crash_variants,
        log_blocks: true,
        settles_torn_merges: true,
    }),
};

/// The invariant suite's sets: one to three log blocks, with and without partial merges.
fn stress_variants() -> Vec<Value> {
    vec![
        json!({"log_blocks": 1}),
        json!({"log_blocks": 2, "partial_merge": true}),
        json!({"log_blocks": 3}),
    ]
}

/// The crash suites' sets.
fn crash_variants() -> Vec<Value> {
    vec![json!({}), json!({"log_blocks": 2, "partial_merge": true})]
}

/// The invariant suite's sets for the zoned map: zones of one and two blocks.
fn zoned_stress_variants() -> Vec<Value> {
    vec![
        json!({"zone_blocks": 1, "log_blocks": 1}),
        json!({"zone_blocks": 2, "log_blocks": 2}),
    ]
}

/// The crash suites' sets for the zoned map.
fn zoned_crash_variants() -> Vec<Value> {
    vec![json!({"zone_blocks": 4, "log_blocks": 3})]
}

/// Zone size of `logblock-zoned`: the TinyFTL paper's 6,144 blocks (a 12 KB zone map).
const PAPER_ZONE_BLOCKS: u32 = 6_144;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BastParams {
    /// Number of log blocks.
    pub log_blocks: u32,
    /// Reclaim a log block holding offsets 0..k in place by copying the missing pages into it (FAST §3.4).
    pub partial_merge: bool,
    /// Logical blocks per zone of a block map kept on flash; 0 keeps the whole map in RAM.
    pub zone_blocks: u32,
    /// Physical space beyond the logical capacity, as a fraction of it; none: the TinyFTL layout (24 blocks
    /// in every 1,024). Never less than the scheme uses (`log_blocks` + 1, and the map blocks).
    pub over_provisioning: Option<f64>,
}

impl Default for BastParams {
    fn default() -> Self {
        BastParams {
            log_blocks: 8,
            partial_merge: false,
            zone_blocks: 0,
            over_provisioning: None,
        }
    }
}

pub struct BastFtl {
    ppb: u32,
    physical_blocks: u32,
    partial_merge: bool,
    data: DataBlocks,
    log: LogBlocks,
    /// Logical block of each log slot, none when the slot is empty.
    owner: Vec<Opt<Lbn>>,
    /// Log slot of each logical block, none if it has none.
    slot_of: SparseVec<Opt<u32>>,
    cursor: u32,
    pool: FreePool,
    /// Data and log blocks are `0..data_and_log_blocks`; map blocks follow.
    data_and_log_blocks: u32,
    sources: Vec<Opt<Ppn>>,
    /// The zoned block map (`logblock-zoned`), None when the whole map is in RAM.
    zones: Option<ZoneMap>,
    zone_blocks: u32,
}

fn zoned_defaults() -> Value {
    serde_json::to_value(BastParams {
        zone_blocks: PAPER_ZONE_BLOCKS,
        ..BastParams::default()
    })
    .unwrap_or(Value::Null)
}

fn build_bast(params: &SchemeParams, g: &Geometry) -> Result<Built, ConfigError> {
    build(params.get("bast")?, g, "bast")
}

fn build_zoned(params: &SchemeParams, g: &Geometry) -> Result<Built, ConfigError> {
    let p: &BastParams = params.get("logblock-zoned")?;
    Checks::new("logblock-zoned")
        .at_least(
            "zone_blocks",
            p.zone_blocks as u64,
            1,
            "use `bast` for a block map wholly in RAM",
        )
        .finish()?;
    build(p, g, "logblock-zoned")
}

fn build(p: &BastParams, g: &Geometry, name: &str) -> Result<Built, ConfigError> {
    let mut checks = Checks::new(name);
    checks
        .at_least(
            "log_blocks",
            p.log_blocks as u64,
            1,
            "overwrites go to log blocks",
        )
        .extra_blocks("log_blocks", p.log_blocks, 1, 0, g)
        .over_provisioning(p.over_provisioning)
        .finish()?;
    let l = g.logical_blocks;
    let zone_blocks = p.zone_blocks.min(l);
    // A zone map entry is as wide as a block address of the chip, whose size depends on the map blocks it
    // holds: settle the two together (one round suffices unless the chip crosses a byte boundary).
    let (mut blocks, mut map_blocks) = (l, 0);
    for _ in 0..3 {
        let entry = address_bytes((blocks + map_blocks).max(paper_chip_blocks(l)) as u64);
        map_blocks = if zone_blocks == 0 {
            0
        } else {
            ZoneMap::map_blocks(
                l,
                zone_blocks,
                entry as u32,
                g.page_bytes,
                g.pages_per_block,
            )
        };
        blocks = l + layout_extra_blocks(g, p.over_provisioning, p.log_blocks + 1 + map_blocks);
        if address_bytes(blocks as u64) == entry {
            break;
        }
    }
    checks
        .extra_blocks("log_blocks", p.log_blocks, 1, map_blocks, g)
        .finish()?;
    let extra = blocks - l;
    let entry = address_bytes(blocks as u64) as u32;
    let data_and_log_blocks = blocks - map_blocks;
    let zones = (zone_blocks > 0).then(|| {
        ZoneMap::new(
            l,
            zone_blocks,
            entry,
            g.page_bytes,
            g.pages_per_block,
            Pbn(data_and_log_blocks),
        )
    });
    let ftl = BastFtl {
        ppb: g.pages_per_block,
        physical_blocks: blocks,
        partial_merge: p.partial_merge,
        data: DataBlocks::new(g.logical_blocks, g.pages_per_block, g.sequential_program),
        log: LogBlocks::new(p.log_blocks, g.pages_per_block, g.logical_pages()),
        owner: vec![Opt::NONE; p.log_blocks as usize],
        slot_of: SparseVec::new(g.logical_blocks as usize, Opt::NONE),
        cursor: 0,
        pool: FreePool::with_range(Pbn(0), data_and_log_blocks),
        data_and_log_blocks,
        sources: vec![Opt::NONE; g.pages_per_block as usize],
        zones,
        zone_blocks,
    };
    Ok(Built {
        ftl: Box::new(ftl),
        extra_blocks: extra,
    })
}

impl Ftl for BastFtl {
    /// Nothing at once with zones: a read may switch the zone.
    fn unmapped_from(&self, lpn: Lpn, pages: u32) -> u32 {
        match self.zones {
            Some(_) => 0,
            None => self.data.unmapped_from(&self.log, lpn, pages),
        }
    }

    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>> {
        if let Some(zones) = &mut self.zones {
            zones.enter(lpn.lbn(self.ppb), dev)?;
        }
        let ppn = match self.log.newest(lpn) {
            Some(ppn) => ppn,
            None => match self.data.page(lpn, dev) {
                Some(ppn) => ppn,
                None => return Ok(None),
            },
        };
        dev.read_token(ppn)
    }

    fn write(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        let lbn = lpn.lbn(self.ppb);
        if let Some(zones) = &mut self.zones {
            zones.enter(lbn, dev)?;
        }
        loop {
            if self.data.fits_in_place(lpn) {
                let new_data_block = self.data.pbn(lbn).is_none();
                self.data
                    .program_in_place(lpn, token, &mut self.pool, dev)?;
                if new_data_block {
                    self.map_changed(lbn, dev)?;
                }
                return Ok(());
            }
            let slot = match self.slot_of.get(lbn.index()).get() {
                None => {
                    let slot = match self.free_slot() {
                        Some(slot) => slot,
                        None => {
                            let victim = self.victim();
                            self.reclaim(victim, dev)?;
                            victim
                        }
                    };
                    let pbn = self
                        .pool
                        .take()
                        .ok_or_else(|| dev.out_of_space("no free block for a log block"))?;
                    self.log.open(slot, pbn);
                    self.owner[slot as usize] = Opt::some(lbn);
                    self.slot_of.set(lbn.index(), Opt::some(slot));
                    slot
                }
                Some(slot) if self.log.is_full(slot) => {
                    // Victim rule (1): the written logical block's own full log block.
                    self.reclaim(slot, dev)?;
                    continue;
                }
                Some(slot) => slot,
            };
            dev.program_with_aux(self.log.next_ppn(slot), token, lpn, SEQ_LOG_AUX)?;
            self.log.append(slot, Some(lpn));
            return Ok(());
        }
    }

    /// Torn pages are detected at mount (`common/mechanisms/boot_scan.rs`, `settle_torn`).
    fn detects_torn_pages(&self) -> bool {
        true
    }

    /// Rebuilds the block map and the log blocks from the spare areas (module doc, "Mount").
    fn mount(&mut self, dev: &mut Device) -> Result<()> {
        let ppb = self.ppb;
        self.data.clear();
        self.log.clear();
        self.owner.fill(Opt::NONE);
        self.slot_of = SparseVec::new(self.slot_of.len(), Opt::NONE);
        self.cursor = 0;
        let mut pages = Vec::with_capacity(ppb as usize);
        let (mut found, mut freed) = (Vec::new(), Vec::new());
        for pbn in (0..self.data_and_log_blocks).map(Pbn) {
            pages.clear();
            scan_block(dev, pbn, Extent::EveryPage, |o, _, s| pages.push((o, s)))?;
            if pages.iter().all(|(_, s)| is_torn(s)) {
                // Erased, or nothing but torn pages (a program into a fresh block cut): erased and free.
                if !pages.is_empty() {
                    dev.erase(pbn)?;
                }
                freed.push(pbn);
                continue;
            }
            match InPlace::from_pages(pbn, &pages, ppb, SEQ_LOG_AUX, true) {
                Some(b) => found.push(b),
                None => return Err(mount_bug(dev, pbn, "pages of several logical blocks")),
            }
        }
        found.sort_by_key(|b| (b.lbn, b.min_seq));
        // (first sequence number, logical block, index in `found`) of each log block.
        let mut logs = Vec::new();
        for group in found.chunk_by(|a, b| a.lbn == b.lbn) {
            let lbn = group[0].lbn;
            let mut group = group.to_vec();
            let roles = settle_torn(dev, &mut group, true, &mut freed)?;
            let programmed = finish_merge(dev, &group, &roles, &mut freed, |_| None)?;
            let data = &group[roles.data];
            self.data.assign(lbn, data.pbn, 0);
            for o in programmed.iter_ones() {
                self.data.mark_programmed(lbn.lpn(o as u32, ppb));
            }
            // A torn page written in place: its offset is taken and holds nothing ([`settle_torn`]).
            for &o in &data.torn {
                self.data.mark_programmed(lbn.lpn(o, ppb));
            }
            if let Some(log) = roles.log.map(|i| &group[i]) {
                logs.push((log.min_seq, log.pbn, lbn, log.lpns.clone()));
            }
        }
        if logs.len() > self.log.slots() as usize {
            return Err(mount_bug(dev, logs[0].1, "more log blocks than log slots"));
        }
        logs.sort_unstable_by_key(|l| l.0);
        for (slot, (_, pbn, lbn, lpns)) in logs.into_iter().enumerate() {
            let slot = slot as u32;
            self.log.open(slot, pbn);
            for lpn in lpns {
                self.log.append(slot, lpn.get());
            }
            self.owner[slot as usize] = Opt::some(lbn);
            self.slot_of.set(lbn.index(), Opt::some(slot));
        }
        self.pool = FreePool::with_range(Pbn(0), 0);
        for pbn in freed {
            self.pool.put(pbn);
        }
        if let Some(zones) = &mut self.zones {
            zones.mount(dev)?;
        }
        Ok(())
    }

    fn finish(&mut self, dev: &mut Device) -> Result<()> {
        match &mut self.zones {
            Some(zones) => zones.flush(dev),
            None => Ok(()),
        }
    }

    fn ram(&self) -> Vec<RamItem> {
        let ram = logblock_ram(self.ppb, self.log.slots(), self.physical_blocks);
        if self.zones.is_none() {
            return ram;
        }
        let mut zoned = zoned_ram(self.zone_blocks, self.physical_blocks);
        zoned.extend(ram.into_iter().filter(|item| item.name != "block_map"));
        zoned
    }
}

impl BastFtl {
    /// The logical block of log slot `slot`, which holds a log block.
    fn owner(&self, slot: u32) -> Lbn {
        self.owner[slot as usize]
            .get()
            .expect("a log slot that holds a log block has an owner")
    }

    fn free_slot(&self) -> Option<u32> {
        (0..self.log.slots()).find(|&s| self.owner[s as usize].is_none())
    }

    /// FAST §3.7: (2) a log block that can be switched, else (3) round robin.
    fn victim(&mut self) -> u32 {
        let n = self.log.slots();
        let switchable = (0..n)
            .map(|i| (self.cursor + i) % n)
            .find(|&s| self.log.is_full(s) && self.log.in_place_order(s, self.owner(s)));
        switchable.unwrap_or_else(|| {
            let s = self.cursor;
            self.cursor = (self.cursor + 1) % n;
            s
        })
    }

    /// Reclaims the log block in `slot` by a switch, a partial merge or a full merge; the slot is left empty.
    fn reclaim(&mut self, slot: u32, dev: &mut Device) -> Result<()> {
        let lbn = self.owner(slot);
        let written = self.log.written(slot);
        dev.record_log_utilization(written);
        let in_place = self.log.in_place_order(slot, lbn);
        let mark = dev.begin_merge();
        let kind = if in_place && written == self.ppb {
            let log = self.log.close(slot);
            merge::switch(dev, &mut self.pool, &mut self.data, lbn, log, self.ppb)?;
            MergeKind::Switch
        } else {
            // The sources lie in two blocks: the log block and the data block.
            if let Some(data) = self.data.pbn(lbn) {
                dev.prefetch_block(data);
            }
            if let Some(log) = self.log.pbn(slot) {
                dev.prefetch_block(log);
            }
            self.log.newest_of_block(lbn, &mut self.sources);
            self.data.fill_missing(lbn, &mut self.sources, dev);
            if in_place && self.partial_merge {
                let log = self.log.close(slot);
                merge::partial_merge(
                    dev,
                    &mut self.pool,
                    &mut self.data,
                    lbn,
                    log,
                    written,
                    &self.sources,
                    None,
                )?;
                MergeKind::Partial
            } else {
                merge::full_merge(
                    dev,
                    &mut self.pool,
                    &mut self.data,
                    lbn,
                    &self.sources,
                    None,
                )?;
                let log = self.log.close(slot);
                dev.erase(log)?;
                self.pool.put(log);
                MergeKind::Full
            }
        };
        dev.end_merge(mark, kind);
        self.owner[slot as usize] = Opt::NONE;
        self.slot_of.set(lbn.index(), Opt::NONE);
        self.map_changed(lbn, dev)
    }

    /// The block map entry of `lbn` changed: with a zoned map, the change must reach its map page.
    fn map_changed(&mut self, lbn: Lbn, dev: &mut Device) -> Result<()> {
        match &mut self.zones {
            Some(zones) => zones.changed(lbn, dev),
            None => Ok(()),
        }
    }
}
