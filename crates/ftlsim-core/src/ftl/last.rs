//! `last`: locality-aware sector translation (Lee, Shin, Kim and Kim, "LAST", ACM SIGOPS OSR 42(6), 2008), as
//! MAST (002, §1 and §4) and the public record describe it. The log buffer is split into a sequential log
//! buffer and a random log buffer; a locality detector sends a write to one or the other by its request
//! size; the random log buffer is split into a hot and a cold partition by the recency of each page's last
//! update, so that hot pages die together and their blocks are reclaimed with no copy at all.
//!
//! ```text
//! write(lpn): lbn, offset := lpn div N, lpn mod N
//!   the data block can take the page in place -> program it there
//!   the sequential log buffer, by FAST's write cases (common/mechanisms/seq_logs.rs), a run opening on a large request:
//!     request bytes >= seq_threshold_bytes, at any offset, and the page does not continue lbn's run ->
//!       lbn's old run (else a free slot, else the oldest block) is reclaimed (switch / partial merge) and a
//!       new sequential log block takes the page at its own offset
//!     lbn has a sequential log block S holding offsets f..k: offset = k -> append (a full S is switched at
//!       once); otherwise the write is folded into S's merge: partial, or full when f <= offset < k
//!   otherwise -> random log buffer: w := w + 1 (random-buffer writes only); the page is hot if its previous
//!     random-buffer write is at most hot_window_pages such writes ago; append to its partition's open block
//! a partition needs a block: a free slot while it is below its size, else the partition above its size
//!   gives one back, else it reclaims one of its own:
//!     either partition: a dead block (no live page) first, oldest first: one erase, no copy ("dead" merge)
//!     hot: its oldest block; cold: its block of lowest associativity (ties: oldest); each fully merged
//!   after each reclaim the partition whose last reclaim cost more flash time per block grows by a block and
//!   the other shrinks, each keeping at least one
//! read(lpn): sequential log block of lbn if it holds the offset, else the newest random log page, else the
//!   data block
//! ```
//! RAM: the block map (as `fast`), the sequential log blocks (physical block, logical block, first and end
//! offsets), the random log blocks (physical block + partition bit), the sector map of the random log blocks
//! (4 B per log page, as FAST §3.2), and the recency table: the random-buffer write count of each logical
//! page's last update (4 B per logical page; the memory overhead 002 §1 holds against LAST). Spare area: the
//! logical page number; a merge reads the spare area of each data-block page it may copy (no log copy), to
//! learn whether it holds data (FAST §3.4; `common/mechanisms/seq_logs.rs`), counted in `flash.spare_reads`. Extra
//! physical blocks: `log_blocks` + 1 (the free block a merge copies into).
//!
//! What this relies on. The LAST paper itself is not in our sources; the public record read for this file is
//! its abstract (a locality-aware FTL that "exploits the locality of storage access patterns" and cuts
//! garbage collection overhead by 54%), the abstract of LAST++ (ACM TOS 2014: "exploiting sequential and
//! temporal localities"), MAST (002 §1: LAST "considers the temporal locality by distinguishing pages into
//! hot page and cold page" and "must save recency of each page"; §4.2: more switch and dead merges than
//! FAST, more full and fewer partial merges than MAST), summed up as: a request-size locality
//! detector that does not require offset 0; a recency window over random-buffer writes; a hot/cold split that
//! is bounded and adapts by the cost of each side; dead-block reclamation in the hot side, lowest
//! associativity victims in the cold side. Where the code goes beyond those:
//! - the threshold (4 KiB), the number of sequential log blocks (`log_blocks / 16`) and the window (half the
//!   random buffer's pages) are our defaults;
//! - a sequential run that starts mid-block keeps the offsets before it empty; its partial merge fills them
//!   after the run, so under the in-order (MLC) rule it is a full merge instead;
//! - the sequential log blocks follow FAST's write cases (the family's one write path), and a full one is
//!   switched at once; the sequential blocks are reclaimed oldest first;
//! - a page's recency is stamped only by its random-buffer writes (a sequential or in-place write leaves it);
//! - the split starts at half the random blocks each (`hot_blocks`); "cost" is the flash time of a
//!   partition's last reclaim per block, and the bound is one block per partition;
//! - when the hot partition has no dead block it gives its oldest block (fully merged);
//! - a dead block is taken first in the cold partition too (it is free to reclaim);
//! - a merged logical block is merged fully (every page from its newest copy), as FAST §3.4 does.
//!
//! Torn pages (`torn_pages`): as FAST's mount (`common/mechanisms/seq_logs.rs`, "Torn pages"): a hole in a
//! random log block, taken and empty in a data block, a merge undone or redone into a free block when its
//! target or a sequential log block holds one, a block of torn pages only erased.
//!
//! On a multi-chip array it runs striped by default (`array/mod.rs`): its block is one physical block on
//! every plane, so successive pages go to successive dies and an erase erases every plane at once.
//! `placement=per-die` runs an instance per die instead, block `lbn` on die `lbn mod dies` (`ftl/per_die.rs`).

use super::common::bounds::Checks;
use super::common::mechanisms::boot_scan::mount_bug;
use super::common::mechanisms::log_blocks::sector_map_ram;
use super::common::mechanisms::seq_logs::{HybridBlocks, SeqWrite};
use super::{
    address_bytes, defaults_of, parse_as, Built, Extra, Ftl, Mounts, RamItem, Scheme, SchemeParams,
};
use crate::addr::{Lpn, Token};
use crate::config::ConfigError;
use crate::config::Geometry;
use crate::device::Result;
use crate::device::{Device, RequestInfo};
use crate::figure::{Figure, Unit};
use crate::sparse::SparseVec;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub const SCHEME: Scheme = Scheme {
    name: "last",
    mapping: super::Mapping::Block,
    summary: "sequential log buffer by request size; random log buffer split into hot and cold partitions",
    citation: "Lee, Shin, Kim, Kim 2008, LAST (ACM SIGOPS OSR 42(6)); as summarised by MAST (paper 002)",
    defaults: defaults_of::<LastParams>,
    parse: parse_as::<LastParams>,
    build: build_last,
    figures: FIGURES,
    profiles: &[],
    stress_variants,
    mount: Some(Mounts {
        variants: crash_variants,
        log_blocks: true,
        settles_torn_merges: true,
    }),
};

/// The report keys of LAST's own figures and what each means.
pub const FIGURES: &[Figure] = &[
    Figure {
        key: "last.victims.dead",
        unit: Unit::Count,
        description: "random log blocks reclaimed with no valid page left (erased, no copy)",
        table: false,
    },
    Figure {
        key: "last.victims.cold",
        unit: Unit::Count,
        description:
            "cold-partition victims reclaimed (the block of lowest associativity) by merges",
        table: false,
    },
    Figure {
        key: "last.victims.hot",
        unit: Unit::Count,
        description: "hot-partition victims reclaimed (the oldest block) by merges",
        table: false,
    },
    Figure {
        key: "last.hot_writes",
        unit: Unit::Count,
        description: "random-buffer writes judged hot (the page's previous one within the window)",
        table: false,
    },
    Figure {
        key: "last.hot_window_pages",
        unit: Unit::Pages,
        description: "the recency window: random-buffer writes within which a rewrite is hot",
        table: false,
    },
    Figure {
        key: "last.area_blocks.hot",
        unit: Unit::Count,
        description: "blocks of the hot partition at the end of the run",
        table: false,
    },
    Figure {
        key: "last.area_blocks.cold",
        unit: Unit::Count,
        description: "blocks of the cold partition at the end of the run",
        table: false,
    },
    Figure {
        key: "last.resizes.grow_hot",
        unit: Unit::Count,
        description: "times the hot partition grew by a block (its last reclaim cost more)",
        table: false,
    },
    Figure {
        key: "last.resizes.grow_cold",
        unit: Unit::Count,
        description: "times the cold partition grew by a block (its last reclaim cost more)",
        table: false,
    },
];

/// The invariant suite's sets: few log blocks, two sequential ones with a small threshold, a short hot window.
fn stress_variants() -> Vec<Value> {
    vec![
        json!({"log_blocks": 3}),
        json!({"log_blocks": 4, "seq_log_blocks": 2, "seq_threshold_bytes": 512}),
        json!({"log_blocks": 5, "hot_window_pages": 3}),
    ]
}

/// The crash suites' sets.
fn crash_variants() -> Vec<Value> {
    vec![
        json!({}),
        json!({"log_blocks": 6, "seq_threshold_bytes": 1024}),
    ]
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LastParams {
    /// Log blocks in all: `seq_log_blocks` sequential ones, the rest random.
    pub log_blocks: u32,
    /// Sequential log blocks; 0: `log_blocks / 16`, at least 1.
    pub seq_log_blocks: u32,
    /// A write of a request of at least this many bytes is sequential (the locality detector).
    pub seq_threshold_bytes: u64,
    /// A page is hot if its previous random-buffer write is among the last this many random-buffer writes;
    /// 0: half the pages of the random log buffer.
    pub hot_window_pages: u64,
    /// Initial size of the hot partition in blocks (it then adapts); 0: half the random log blocks.
    pub hot_blocks: u32,
}

impl Default for LastParams {
    fn default() -> Self {
        LastParams {
            log_blocks: 8,
            seq_log_blocks: 0,
            seq_threshold_bytes: 4096,
            hot_window_pages: 0,
            hot_blocks: 0,
        }
    }
}

const HOT: usize = 0;
const COLD: usize = 1;
const FREE: u8 = 2;

fn build_last(params: &SchemeParams, g: &Geometry) -> Result<Built, ConfigError> {
    let p: &LastParams = params.get("last")?;
    let seq = if p.seq_log_blocks == 0 {
        (p.log_blocks / 16).max(1)
    } else {
        p.seq_log_blocks
    };
    let mut checks = Checks::new("last");
    checks.extra_blocks("log_blocks", p.log_blocks, 1, 0, g);
    let two = "one hot and one cold random log block besides the sequential ones";
    if p.seq_log_blocks == 0 {
        checks.at_least("log_blocks", p.log_blocks as u64, seq as u64 + 2, two);
    } else {
        checks.at_most(
            "seq_log_blocks",
            seq as u64,
            p.log_blocks.saturating_sub(2) as u64,
            &format!(
                "log_blocks={} keeps {two}; raising log_blocks raises it",
                p.log_blocks
            ),
        );
    }
    checks.finish()?;
    let random = p.log_blocks - seq;
    let hot_window = if p.hot_window_pages == 0 {
        (random as u64 * g.pages_per_block as u64 / 2).max(1)
    } else {
        p.hot_window_pages
    };
    let hot = if p.hot_blocks == 0 {
        random / 2
    } else {
        p.hot_blocks
    };
    if hot == 0 || hot >= random {
        Checks::new("last")
            .problem(
                "hot_blocks",
                hot,
                format!(
                    "must leave each partition a block of the {random} random log blocks: from 1 to {}",
                    random - 1
                ),
                Some((random / 2).max(1).to_string()),
            )
            .finish()?;
    }
    let extra = p.log_blocks + 1;
    let blocks = g.logical_blocks + extra;
    let ftl = LastFtl {
        ppb: g.pages_per_block,
        physical_blocks: blocks,
        seq_threshold_bytes: p.seq_threshold_bytes,
        request_bytes: 0,
        hot_window,
        blocks: HybridBlocks::new(g, seq, random, blocks),
        partition: vec![FREE; random as usize],
        opened: vec![0; random as usize],
        open: [None, None],
        count: [0, 0],
        size: [hot, random - hot],
        cost_us: [None, None],
        clock: 0,
        last_write: SparseVec::new(g.logical_pages() as usize, 0),
        writes: 0,
        victims: [0; 3],
        resizes: [0; 2],
        hot_writes: 0,
    };
    Ok(Built {
        ftl: Box::new(ftl),
        extra_blocks: extra,
    })
}

pub struct LastFtl {
    ppb: u32,
    physical_blocks: u32,
    seq_threshold_bytes: u64,
    /// Bytes of the host request being served (the locality detector's input).
    request_bytes: u64,
    hot_window: u64,
    /// Data blocks, sequential log blocks, random log blocks (`blocks.log`) and free blocks.
    blocks: HybridBlocks,
    /// HOT, COLD (as u8) or FREE, per random log slot.
    partition: Vec<u8>,
    opened: Vec<u64>,
    /// The block each partition appends to.
    open: [Option<u32>; 2],
    /// Blocks each partition holds, and its size (the two sizes add up to the random log blocks).
    count: [u32; 2],
    size: [u32; 2],
    /// Flash time of each partition's last reclaim, per block reclaimed.
    cost_us: [Option<f64>; 2],
    clock: u64,
    /// Random-buffer write count (1-based) of each logical page's last random-buffer write; 0: none.
    last_write: SparseVec<u64>,
    writes: u64,
    /// Victims reclaimed: dead, cold, hot.
    victims: [u64; 3],
    /// Hot partition grown, cold partition grown.
    resizes: [u64; 2],
    hot_writes: u64,
}

impl Ftl for LastFtl {
    fn begin_request(&mut self, req: &RequestInfo) {
        self.request_bytes = req.bytes;
    }

    fn listens_to_requests(&self) -> bool {
        true
    }

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
        let large = self.request_bytes >= self.seq_threshold_bytes;
        match self.blocks.write_seq(lpn, token, large, dev)? {
            SeqWrite::Appended { .. } => {
                // A full sequential log block is switched at once: it frees a sequential slot.
                self.blocks.switch_full_seq(dev)?;
                return Ok(());
            }
            SeqWrite::Merged(_) => return Ok(()),
            SeqWrite::NotMine => {}
        }
        self.writes += 1;
        let previous = self.last_write.get(lpn.index());
        self.last_write.set(lpn.index(), self.writes);
        let hot = previous != 0 && self.writes - previous <= self.hot_window;
        self.hot_writes += hot as u64;
        let part = if hot { HOT } else { COLD };
        let slot = self.random_slot(part, dev)?;
        self.blocks
            .append_random(slot, lpn, token, part as u32, dev)
    }

    /// Torn pages are detected at mount (`common/mechanisms/boot_scan.rs`, `settle_torn`).
    fn detects_torn_pages(&self) -> bool {
        true
    }

    /// The blocks and both buffers from the spare areas ([`HybridBlocks::mount`]); each random log block's
    /// partition from its pages' scheme word; each partition appends to its newest block; the split is the
    /// blocks found (each partition at least one); the recency table and the reclaim costs, which no flash
    /// page holds, start afresh.
    fn mount(&mut self, dev: &mut Device) -> Result<()> {
        let found = self.blocks.mount(dev, self.physical_blocks)?;
        let random = self.partition.len() as u32;
        self.partition.fill(FREE);
        self.opened.fill(0);
        self.open = [None, None];
        self.count = [0, 0];
        for (slot, &(pbn, part)) in found.iter().enumerate() {
            if part as usize > COLD {
                return Err(mount_bug(dev, pbn, "a random log block of no partition"));
            }
            self.partition[slot] = part as u8;
            self.opened[slot] = slot as u64 + 1;
            self.open[part as usize] = Some(slot as u32);
            self.count[part as usize] += 1;
        }
        self.clock = found.len() as u64;
        let hot = self.count[HOT].clamp(1, random - 1);
        self.size = [hot, random - hot];
        self.cost_us = [None, None];
        self.last_write = SparseVec::new(self.last_write.len(), 0);
        self.writes = 0;
        Ok(())
    }

    fn ram(&self) -> Vec<RamItem> {
        let entry = address_bytes(self.physical_blocks as u64);
        let (seq, random) = (
            self.blocks.seq_slots() as u64,
            self.blocks.log.slots() as u64,
        );
        let logical_pages = self.last_write.len() as u64;
        let mut ram = self.blocks.data.ram(self.physical_blocks);
        ram.push(RamItem::new(
            "seq_log_blocks",
            seq * (2 * entry + 2 * address_bytes(self.ppb as u64 + 1)),
            format!(
                "{seq} x (physical block + logical block, {entry} B each, + first and end offsets)"
            ),
        ));
        ram.push(RamItem::new(
            "random_log_blocks",
            random * entry + random.div_ceil(8),
            format!("{random} x {entry} B + 1 partition bit each"),
        ));
        ram.push(sector_map_ram(random, self.ppb, "random log blocks"));
        ram.push(RamItem::new(
            "recency_table",
            logical_pages * 4,
            format!("{logical_pages} logical pages x 4 B (random-buffer write count of the last update)"),
        ));
        ram
    }

    fn extra(&self, out: &mut Extra) {
        out.push(("last.victims.dead".into(), self.victims[0].into()));
        out.push(("last.victims.cold".into(), self.victims[1].into()));
        out.push(("last.victims.hot".into(), self.victims[2].into()));
        out.push(("last.hot_writes".into(), self.hot_writes.into()));
        out.push(("last.hot_window_pages".into(), self.hot_window.into()));
        out.push(("last.area_blocks.hot".into(), self.size[HOT].into()));
        out.push(("last.area_blocks.cold".into(), self.size[COLD].into()));
        out.push(("last.resizes.grow_hot".into(), self.resizes[0].into()));
        out.push(("last.resizes.grow_cold".into(), self.resizes[1].into()));
    }
}

impl LastFtl {
    /// The random log block partition `part` appends to, opening one if needed: a free slot while the
    /// partition is below its size; else the partition above its size gives a block back; else `part`
    /// reclaims one of its own.
    fn random_slot(&mut self, part: usize, dev: &mut Device) -> Result<u32> {
        if let Some(slot) = self.open[part] {
            if !self.blocks.log.is_full(slot) {
                return Ok(slot);
            }
        }
        let free = self.partition.iter().position(|&p| p == FREE);
        let slot = match free {
            Some(free) if self.count[part] < self.size[part] => free as u32,
            _ => {
                let other = 1 - part;
                let giver = if self.count[part] < self.size[part] && self.has_victim(other) {
                    other
                } else {
                    part
                };
                self.reclaim(giver, dev)?
            }
        };
        let pbn = self
            .blocks
            .pool
            .take()
            .ok_or_else(|| dev.out_of_space("no free block for a random log block"))?;
        self.blocks.log.open(slot, pbn);
        self.partition[slot as usize] = part as u8;
        self.count[part] += 1;
        self.clock += 1;
        self.opened[slot as usize] = self.clock;
        self.open[part] = Some(slot);
        Ok(slot)
    }

    fn has_victim(&self, part: usize) -> bool {
        (0..self.blocks.log.slots()).any(|s| self.is_candidate(s, part))
    }

    /// A full block of `part` (a partition's open block too, once full).
    fn is_candidate(&self, slot: u32, part: usize) -> bool {
        self.partition[slot as usize] == part as u8 && self.blocks.log.is_full(slot)
    }

    /// Reclaims a block of `part` and returns its now free slot. Either partition takes a dead block (no live
    /// page) first, oldest first: one erase, no copy. Otherwise the hot partition gives its oldest block
    /// (its pages had the longest to die) and the cold partition its block of lowest associativity (ties:
    /// the oldest), each fully merged. The flash time per block reclaimed is the partition's cost; after
    /// each reclaim the costlier partition grows by a block at the other's expense, down to one block each.
    fn reclaim(&mut self, part: usize, dev: &mut Device) -> Result<u32> {
        let mut dead: Option<u32> = None;
        let mut best: Option<((u32, u64), u32)> = None;
        for s in 0..self.blocks.log.slots() {
            if !self.is_candidate(s, part) {
                continue;
            }
            let age = self.opened[s as usize];
            if self.blocks.log.live(s) == 0 {
                if dead.is_none_or(|d| age < self.opened[d as usize]) {
                    dead = Some(s);
                }
                continue;
            }
            let key = if part == HOT {
                (0, age)
            } else {
                (self.blocks.log.associativity(s), age)
            };
            if best.is_none_or(|(k, _)| key < k) {
                best = Some((key, s));
            }
        }
        let (victim, class) = match (dead, best) {
            (Some(d), _) => (d, 0),
            (None, Some((_, s))) => (s, if part == HOT { 2 } else { 1 }),
            (None, None) => return Err(dev.out_of_space("no full random log block to reclaim")),
        };
        self.victims[class] += 1;
        if self.open[part] == Some(victim) {
            self.open[part] = None;
        }
        let before = dev.elapsed_us();
        self.blocks.merge_victim(dev, victim, false)?;
        self.cost_us[part] = Some(dev.elapsed_us() - before);
        self.partition[victim as usize] = FREE;
        self.count[part] -= 1;
        self.adapt();
        Ok(victim)
    }

    /// The costlier partition (by its last reclaim) grows by a block, the other shrinks, each keeping one.
    fn adapt(&mut self) {
        let (Some(hot), Some(cold)) = (self.cost_us[HOT], self.cost_us[COLD]) else {
            return;
        };
        if hot > cold && self.size[COLD] > 1 {
            self.size[HOT] += 1;
            self.size[COLD] -= 1;
            self.resizes[0] += 1;
        } else if cold > hot && self.size[HOT] > 1 {
            self.size[COLD] += 1;
            self.size[HOT] -= 1;
            self.resizes[1] += 1;
        }
    }
}
