//! `mast`: multi-level associated sector translation (Kim, Kang, Ha, Cho and Eom, paper 002, §2-§3). The log
//! blocks are split into three areas: the locality detection area LA (FAST's SW block for sequential runs and
//! random log blocks), the hot area HA and the cold area CA.
//!
//! ```text
//! write(lpn): lbn, offset := lpn div N, lpn mod N
//!   the data block can take the page in place -> program it there
//!   sequential writes follow FAST's rules (FAST Fig. 6, cases 1-2.3) in the SW block of LA
//!   otherwise: the page's newest log copy is in LA (§2.1: "scanning pages in LA") -> it is hot: append to
//!              HA (§2.2: LRU); else -> append to LA's random blocks
//! an area needs a block and has none free:
//!   LA: its oldest block leaves; more than migrate_valid_pages live pages -> the block migrates whole to CA
//!       (§2.1: no copy); else its live pages (the oldest pages of LA) are copied to CA as cold, and it is
//!       erased (no live page: a dead merge, one erase, no copy)
//!   HA: its oldest block leaves: its live pages are the least recently updated of HA: copied to CA as cold
//!       (§2.2); no live page: a dead merge
//!   CA: victim = a dead block if any, else the most live pages, ties: fewest associated data blocks (§2.2);
//!       full merge of each logical block with a live page in it, then its erase
//! idle(): a full SW block is switched; CA victims are merged until CA has a free block (at most idle_merges)
//! dynamic sizing (§3), checked at every CA replacement: CA utilization < ca_util_low or falling at three
//!   checks in a row -> LA grows by a block, CA shrinks; else HA utilization > ha_util_high and rising -> LA
//!   shrinks, CA grows (areas above their size give blocks back as they need new ones); no area shrinks
//!   below one block
//! read(lpn): SW page if the SW block belongs to lbn and holds the offset, else the newest log page (any area),
//!   else the data block
//! ```
//! RAM: the block map (as `fast`), the SW block, the log blocks' physical blocks with a 2-bit area tag each,
//! the sector map of the log blocks (4 B per log page, FAST §3.2) and the three area sizes. No per-page
//! recency: hot pages are found by their presence in LA (002 §1: "without any memory overheads"); HA's LRU
//! order is its blocks' append order. Spare area: the logical page number; a merge
//! reads the spare area of each data-block page it may copy (no log copy), to learn whether it holds data (FAST
//! §3.4; `common/mechanisms/seq_logs.rs`), counted in `flash.spare_reads`. Extra physical blocks:
//! `log_blocks` + 1 (the free block a merge copies into).
//!
//! Choices where the paper is silent or loose:
//! - `log_blocks` (256, §4) is clamped to the number of logical blocks (and to the extra blocks a device
//!   takes, `common/bounds.rs`), and to at least 4 (SW, LA, HA, CA one block each), so that the same defaults
//!   run on toy devices; LA and HA are then clamped to leave
//!   every area a block; the clamped figures are in the report (`mast.log_blocks`, `mast.area_blocks.*`);
//! - LA gets `la_blocks` (default an eighth of the non-SW log blocks), HA `ha_blocks` (likewise), CA the rest;
//! - "written again while still in LA" = the page's newest log copy is in an LA random block (the scan of
//!   §2.1 covers LA only); a page in HA or CA that is written again goes to LA to be detected again (its
//!   older copy goes stale); HA's LRU (§2.2) is its blocks' append order;
//! - LA and HA are reclaimed a block at a time, oldest first: the live pages of the oldest block are exactly
//!   the least recently updated live pages of the area (page-level LRU where an update is a write);
//! - the page moves LA -> CA and HA -> CA are not merges (no data block is involved): emptying a block so is
//!   a garbage collection (`gc.runs`, `gc.copied_pages`, the `gc` cause of `flash.*`), its copies also in
//!   `mast.moved_pages.*`; an LA/HA block with no live page left is a dead merge; when CA cannot give a block
//!   without reclaiming the block being emptied, the rest of that block is full-merged instead (only on very
//!   small configurations);
//! - the CA victim rule "maximum number of valid pages as well as the minimum associated data blocks" is read
//!   lexicographically: most valid pages first, then the fewest associated data blocks, then the oldest; a
//!   dead CA block (no valid page: free to reclaim) goes before both;
//! - §3 gives the sizing rule but no bounds. The only floor the mechanism itself needs is one block per
//!   area (CA takes LA's and HA's cold pages; an area of no block could not take a page), which the default
//!   keeps. "Gradually decreasing" is read as falling at three checks in a row. `ca_min_share` (default 0,
//!   off) raises CA's floor to a share of the random log blocks; it is not in the paper, and when set the
//!   report says so (`mast.deviation.ca_min_share`);
//! - utilization (Fig. 2) = live pages / written pages of an area's blocks, sampled at every replacement in
//!   any area and averaged over the run (`mast.utilization.*`); the dynamic sizing uses the current values.
//! - idle-time merges: the paper says only that CA's victim is merged "in the idle time" (§1), with no budget
//!   and no trigger. ftlsim merges at an idle period only while CA holds all its blocks and the one it is
//!   filling is full, at most `idle_merges` (default 4) times: idle time reclaims what the next write to CA
//!   would, and no more: merging further ahead copies pages that might still be overwritten;
//! - the bounds these choices leave open were tested as causes of MAST losing to LAST (`ftlsim reproduce
//!   mast-fig4`, full size: 400,000 writes, 256 log blocks, 400 idle gaps). Defaults (dynamic sizing, CA
//!   floor one block, 4 idle merges): CA ends at 1 of 256 blocks (LA grew 192 times), 5 idle merges run,
//!   MAST 7.0% faster than FAST, 20.8% slower than LAST. No dynamic sizing (CA 193 blocks): 14.3% faster
//!   than FAST, 11.4% slower than LAST. A CA floor of 25% (`ca_min_share` 0.25; CA ends at 64): 14.3% and
//!   11.3%. 64 idle merges: identical to the defaults (still 5 merges: CA nearly always has a free block
//!   at an idle period, so the budget never binds). Sizing is the larger lever, but none of the three makes
//!   MAST beat LAST on the stand-in; the defaults stay the paper's rule as written.
//!
//! Torn pages (`torn_pages`): as FAST's mount (`common/mechanisms/seq_logs.rs`, "Torn pages"): a hole in a
//! random log block, taken and empty in a data block, a merge undone or redone into a free block when its
//! target or a sequential log block holds one, a block of torn pages only erased.
//!
//! On a multi-chip array it runs striped by default (`array/mod.rs`): its block is one physical block on
//! every plane, so successive pages go to successive dies and an erase erases every plane at once.
//! `placement=per-die` runs an instance per die instead, block `lbn` on die `lbn mod dies` (`ftl/per_die.rs`).

use super::common::bounds::{extra_blocks_limit, Checks};
use super::common::mechanisms::boot_scan::mount_bug;
use super::common::mechanisms::log_blocks::{sector_map_ram, PageState};
use super::common::mechanisms::seq_logs::{HybridBlocks, SeqWrite};
use super::{
    address_bytes, defaults_of, parse_as, Built, Extra, Ftl, Mounts, RamItem, Scheme, SchemeParams,
};
use crate::addr::{Lpn, Token};
use crate::config::ConfigError;
use crate::config::Geometry;
use crate::device::Device;
use crate::device::Result;
use crate::figure::{Figure, Unit};
use crate::stats::MergeKind;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::VecDeque;

pub const SCHEME: Scheme = Scheme {
    name: "mast",
    mapping: super::Mapping::Block,
    summary: "log blocks in three areas: locality detection (LA), hot (HA, LRU) and cold (CA); idle-time merges",
    citation: "Kim, Kang, Ha, Cho, Eom 2015, MAST (paper 002) sections 2-4",
    defaults: defaults_of::<MastParams>,
    parse: parse_as::<MastParams>,
    build: build_mast,
    figures: FIGURES,
    profiles: &[],
    stress_variants,
    mount: Some(Mounts {
        variants: crash_variants,
        log_blocks: true,
        settles_torn_merges: true,
    }),
};

/// The report keys of MAST's own figures and what each means.
pub const FIGURES: &[Figure] = &[
    Figure {
        key: "mast.utilization.la",
        unit: Unit::Ratio,
        description: "live pages per written page of LA (locality detection area)'s blocks, sampled at every replacement and averaged (MAST Fig. 2)",
        table: false,
    },
    Figure {
        key: "mast.area_blocks.la",
        unit: Unit::Count,
        description: "blocks of LA (locality detection area) at the end of the run",
        table: false,
    },
    Figure {
        key: "mast.utilization.ha",
        unit: Unit::Ratio,
        description: "live pages per written page of HA (hot area)'s blocks, sampled at every replacement and averaged (MAST Fig. 2)",
        table: false,
    },
    Figure {
        key: "mast.area_blocks.ha",
        unit: Unit::Count,
        description: "blocks of HA (hot area) at the end of the run",
        table: false,
    },
    Figure {
        key: "mast.utilization.ca",
        unit: Unit::Ratio,
        description: "live pages per written page of CA (cold area)'s blocks, sampled at every replacement and averaged (MAST Fig. 2)",
        table: false,
    },
    Figure {
        key: "mast.area_blocks.ca",
        unit: Unit::Count,
        description: "blocks of CA (cold area) at the end of the run",
        table: false,
    },
    Figure {
        key: "mast.utilization.samples",
        unit: Unit::Count,
        description: "replacements at which the areas' utilization was sampled",
        table: false,
    },
    Figure {
        key: "mast.log_blocks",
        unit: Unit::Count,
        description: "log blocks as run (log_blocks clamped to the logical and the extra blocks)",
        table: false,
    },
    Figure {
        key: "mast.writes.la",
        unit: Unit::Count,
        description: "random page writes to LA",
        table: false,
    },
    Figure {
        key: "mast.writes.ha",
        unit: Unit::Count,
        description: "random page writes to HA",
        table: false,
    },
    Figure {
        key: "mast.moved_pages.la_to_ca",
        unit: Unit::Pages,
        description: "live pages moved from LA to CA",
        table: false,
    },
    Figure {
        key: "mast.moved_pages.ha_to_ca",
        unit: Unit::Pages,
        description: "live pages moved from HA to CA",
        table: false,
    },
    Figure {
        key: "mast.migrated_blocks",
        unit: Unit::Count,
        description: "LA blocks with more than migrate_valid_pages live pages that migrated whole to CA",
        table: false,
    },
    Figure {
        key: "mast.fallback_merges",
        unit: Unit::Count,
        description: "merges run because an area that needed a block had none to take",
        table: false,
    },
    Figure {
        key: "mast.resizes.grow_la",
        unit: Unit::Count,
        description: "times dynamic sizing grew LA by a block (CA shrank)",
        table: false,
    },
    Figure {
        key: "mast.resizes.shrink_la",
        unit: Unit::Count,
        description: "times dynamic sizing shrank LA by a block (CA grew)",
        table: false,
    },
    Figure {
        key: "mast.idle_merges",
        unit: Unit::Count,
        description: "CA victims merged in idle time (at most idle_merges)",
        table: false,
    },
    Figure {
        key: "mast.deviation.ca_min_share",
        unit: Unit::Ratio,
        description: "not in the paper: the floor of CA's share of the random blocks (ca_min_share), when above 0",
        table: false,
    },
];

/// The invariant suite's sets: few log blocks, fixed area sizes, explicit areas, no idle merges.
fn stress_variants() -> Vec<Value> {
    vec![
        json!({"log_blocks": 4}),
        json!({"log_blocks": 4, "dynamic_sizing": false}),
        json!({"log_blocks": 6, "la_blocks": 2, "ha_blocks": 1, "migrate_valid_pages": 1}),
        json!({"log_blocks": 5, "dynamic_sizing": false, "idle_merges": 0}),
    ]
}

/// The crash suites' sets.
fn crash_variants() -> Vec<Value> {
    vec![json!({}), json!({"log_blocks": 5, "idle_merges": 1})]
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MastParams {
    /// Log blocks in all (002 §4: 256); clamped to [4, logical blocks].
    pub log_blocks: u32,
    /// Random log blocks of LA; 0: an eighth of the log blocks besides the SW block, at least 1.
    pub la_blocks: u32,
    /// Blocks of HA; 0: an eighth of the log blocks besides the SW block, at least 1.
    pub ha_blocks: u32,
    /// An LA block leaving LA with more live pages than this migrates whole to CA; 0: half a block;
    /// at most pages_per_block (never).
    pub migrate_valid_pages: u32,
    /// Resize LA and CA by their utilization (§3).
    pub dynamic_sizing: bool,
    /// CA utilization below this grows LA (a share, 0 to 1).
    pub ca_util_low: f64,
    /// HA utilization above this (and rising) shrinks LA (a share, 0 to 1).
    pub ha_util_high: f64,
    /// Not in the paper (a deviation, reported as `mast.deviation.ca_min_share` when above 0): dynamic sizing
    /// never shrinks CA below this share (0 to 1) of the random log blocks. 0: one block, the paper's own floor.
    pub ca_min_share: f64,
    /// CA merges run at most per idle period.
    pub idle_merges: u32,
}

impl Default for MastParams {
    fn default() -> Self {
        MastParams {
            log_blocks: 256,
            la_blocks: 0,
            ha_blocks: 0,
            migrate_valid_pages: 0,
            dynamic_sizing: true,
            ca_util_low: 0.5,
            ha_util_high: 0.5,
            ca_min_share: 0.0,
            idle_merges: 4,
        }
    }
}

const LA: usize = 0;
const HA: usize = 1;
const CA: usize = 2;
const FREE: u8 = 3;
const AREA_NAMES: [&str; 3] = ["la", "ha", "ca"];

fn build_mast(params: &SchemeParams, g: &Geometry) -> Result<Built, ConfigError> {
    let p: &MastParams = params.get("mast")?;
    let ppb = g.pages_per_block;
    let mut checks = Checks::new("mast");
    checks
        .at_least(
            "log_blocks",
            p.log_blocks as u64,
            4,
            "the SW block and one block each for LA, HA and CA",
        )
        .at_most(
            "migrate_valid_pages",
            p.migrate_valid_pages as u64,
            ppb as u64,
            &format!("a block has {ppb} pages; {ppb} never migrates"),
        )
        .share("ca_util_low", p.ca_util_low)
        .share("ha_util_high", p.ha_util_high)
        .share("ca_min_share", p.ca_min_share);
    let log_blocks = p
        .log_blocks
        .min(g.logical_blocks)
        .min(extra_blocks_limit(g).saturating_sub(1))
        .max(4);
    let random = log_blocks - 1;
    let eighth = (random / 8).max(1);
    let mut la = if p.la_blocks == 0 {
        eighth
    } else {
        p.la_blocks
    };
    let mut ha = if p.ha_blocks == 0 {
        eighth
    } else {
        p.ha_blocks
    };
    if log_blocks < p.log_blocks {
        // A device smaller than the log: the areas shrink with it, each keeping a block.
        la = la.min(random - 2);
        ha = ha.min(random - 1 - la);
    }
    if la as u64 + ha as u64 >= random as u64 {
        checks.problem(
            "la_blocks",
            la,
            format!(
                "with ha_blocks={ha} must leave CA a block of the {random} log blocks besides the SW block \
                 (log_blocks={log_blocks} after clamping to the device); lower la_blocks or ha_blocks"
            ),
            random.checked_sub(ha + 1).filter(|&n| n > 0).map(|n| n.to_string()),
        );
    }
    checks.finish()?;
    let extra = log_blocks + 1;
    let blocks = g.logical_blocks + extra;
    let ftl = MastFtl {
        ppb,
        physical_blocks: blocks,
        log_blocks,
        migrate_valid_pages: if p.migrate_valid_pages == 0 {
            ppb / 2
        } else {
            p.migrate_valid_pages
        },
        dynamic_sizing: p.dynamic_sizing,
        ca_util_low: p.ca_util_low,
        ha_util_high: p.ha_util_high,
        ca_min_share: p.ca_min_share,
        ca_min_blocks: ((random as f64 * p.ca_min_share).ceil() as u32).max(1),
        idle_merges: p.idle_merges,
        blocks: HybridBlocks::new(g, 1, random, blocks),
        area: vec![FREE; random as usize],
        queue: [VecDeque::new(), VecDeque::new(), VecDeque::new()],
        size: [la, ha, random - la - ha],
        first_size: [la, ha, random - la - ha],
        prev_ca_util: None,
        ca_falling: 0,
        prev_ha_util: None,
        util_sum: [0.0; 3],
        util_samples: 0,
        writes: [0; 2],
        moved: [0; 2],
        migrated_blocks: 0,
        fallback_merges: 0,
        resizes: [0; 2],
        idle_merges_done: 0,
    };
    Ok(Built {
        ftl: Box::new(ftl),
        extra_blocks: extra,
    })
}

pub struct MastFtl {
    ppb: u32,
    physical_blocks: u32,
    log_blocks: u32,
    migrate_valid_pages: u32,
    dynamic_sizing: bool,
    ca_util_low: f64,
    ha_util_high: f64,
    ca_min_share: f64,
    ca_min_blocks: u32,
    idle_merges: u32,
    /// Data blocks, log blocks and free blocks. LA's random blocks, HA and CA share the log slots; `area`
    /// tags each.
    blocks: HybridBlocks,
    area: Vec<u8>,
    /// Each area's blocks, oldest first; the last one is the block being appended to.
    queue: [VecDeque<u32>; 3],
    /// Each area's size in blocks (LA's random blocks, HA, CA), and the configured one it starts from.
    size: [u32; 3],
    first_size: [u32; 3],
    prev_ca_util: Option<f64>,
    ca_falling: u32,
    prev_ha_util: Option<f64>,
    util_sum: [f64; 3],
    util_samples: u64,
    /// Random writes to LA and to HA.
    writes: [u64; 2],
    /// Pages copied LA -> CA and HA -> CA.
    moved: [u64; 2],
    migrated_blocks: u64,
    fallback_merges: u64,
    /// LA grown, LA shrunk.
    resizes: [u64; 2],
    idle_merges_done: u64,
}

impl Ftl for MastFtl {
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
        // Sequential writes follow FAST's rules in LA's SW block.
        if self
            .blocks
            .write_seq(lpn, token, lpn.offset(self.ppb) == 0, dev)?
            != SeqWrite::NotMine
        {
            return Ok(());
        }
        let hot = self
            .blocks
            .log
            .newest_slot(lpn)
            .is_some_and(|s| self.area[s as usize] as usize == LA);
        let area = if hot { HA } else { LA };
        self.writes[area] += 1;
        let slot = self.slot_for(area, dev)?;
        self.blocks
            .append_random(slot, lpn, token, area as u32, dev)
    }

    /// Torn pages are detected at mount (`common/mechanisms/boot_scan.rs`, `settle_torn`).
    fn detects_torn_pages(&self) -> bool {
        true
    }

    /// The blocks, the SW block and the log blocks from the spare areas ([`HybridBlocks::mount`]); each
    /// log block's area from its pages' scheme word (a block that migrated whole from LA to CA, which no
    /// flash operation records, comes back in LA); each area's queue in the order its blocks were opened. The
    /// dynamic sizing, which no flash page holds, restarts from the configured sizes.
    fn mount(&mut self, dev: &mut Device) -> Result<()> {
        let found = self.blocks.mount(dev, self.physical_blocks)?;
        self.area.fill(FREE);
        self.queue.iter_mut().for_each(VecDeque::clear);
        for (slot, &(pbn, area)) in found.iter().enumerate() {
            if area as usize > CA {
                return Err(mount_bug(dev, pbn, "a log block of no area"));
            }
            self.area[slot] = area as u8;
            self.blocks.log.set_group(slot as u32, area as u8);
            self.queue[area as usize].push_back(slot as u32);
        }
        self.size = self.first_size;
        self.prev_ca_util = None;
        self.ca_falling = 0;
        self.prev_ha_util = None;
        Ok(())
    }

    fn idle(&mut self, dev: &mut Device) -> Result<()> {
        self.blocks.switch_full_seq(dev)?;
        for _ in 0..self.idle_merges {
            let full_back = self.queue[CA]
                .back()
                .is_some_and(|&b| self.blocks.log.is_full(b));
            if self.queue[CA].len() < self.size[CA] as usize || !full_back {
                break;
            }
            self.reclaim_ca(dev)?;
            self.idle_merges_done += 1;
        }
        Ok(())
    }

    fn ram(&self) -> Vec<RamItem> {
        let entry = address_bytes(self.physical_blocks as u64);
        let slots = self.blocks.log.slots() as u64;
        let mut ram = self.blocks.data.ram(self.physical_blocks);
        ram.push(RamItem::new(
            "sw_block",
            2 * entry + address_bytes(self.ppb as u64 + 1),
            format!("physical block + logical block ({entry} B each) + page count"),
        ));
        ram.push(RamItem::new(
            "log_block_table",
            slots * entry + (slots * 2).div_ceil(8),
            format!("{slots} log blocks x {entry} B + a 2-bit area tag each"),
        ));
        ram.push(sector_map_ram(slots, self.ppb, "log blocks"));
        ram.push(RamItem::new(
            "area_sizes",
            3 * 2,
            "LA, HA and CA sizes x 2 B",
        ));
        ram
    }

    fn extra(&self, out: &mut Extra) {
        let n = self.util_samples.max(1) as f64;
        for a in [LA, HA, CA] {
            let name = AREA_NAMES[a];
            out.push((
                format!("mast.utilization.{name}"),
                (self.util_sum[a] / n).into(),
            ));
            out.push((format!("mast.area_blocks.{name}"), self.size[a].into()));
        }
        out.push(("mast.utilization.samples".into(), self.util_samples.into()));
        out.push(("mast.log_blocks".into(), self.log_blocks.into()));
        out.push(("mast.writes.la".into(), self.writes[LA].into()));
        out.push(("mast.writes.ha".into(), self.writes[HA].into()));
        out.push(("mast.moved_pages.la_to_ca".into(), self.moved[0].into()));
        out.push(("mast.moved_pages.ha_to_ca".into(), self.moved[1].into()));
        out.push(("mast.migrated_blocks".into(), self.migrated_blocks.into()));
        out.push(("mast.fallback_merges".into(), self.fallback_merges.into()));
        out.push(("mast.resizes.grow_la".into(), self.resizes[0].into()));
        out.push(("mast.resizes.shrink_la".into(), self.resizes[1].into()));
        out.push(("mast.idle_merges".into(), self.idle_merges_done.into()));
        if self.ca_min_share > 0.0 {
            out.push((
                "mast.deviation.ca_min_share".into(),
                self.ca_min_share.into(),
            ));
        }
    }
}

impl MastFtl {
    fn free_slot(&self) -> Option<u32> {
        self.area.iter().position(|&a| a == FREE).map(|s| s as u32)
    }

    fn open(&mut self, area: usize, slot: u32, dev: &Device) -> Result<u32> {
        let pbn = self
            .blocks
            .pool
            .take()
            .ok_or_else(|| dev.out_of_space("no free block for a log block"))?;
        self.blocks.log.open(slot, pbn);
        self.blocks.log.set_group(slot, area as u8);
        self.area[slot as usize] = area as u8;
        self.queue[area].push_back(slot);
        Ok(slot)
    }

    /// The block LA or HA appends to, making room when the area needs a new block (see the header).
    fn slot_for(&mut self, area: usize, dev: &mut Device) -> Result<u32> {
        if let Some(&back) = self.queue[area].back() {
            if !self.blocks.log.is_full(back) {
                return Ok(back);
            }
        }
        loop {
            let count = self.queue[area].len() as u32;
            if count < self.size[area] {
                if let Some(slot) = self.free_slot() {
                    return self.open(area, slot, dev);
                }
                // Another area holds more blocks than its size: it gives one back.
                let over = [LA, HA, CA]
                    .into_iter()
                    .filter(|&a| a != area)
                    .max_by_key(|&a| self.queue[a].len() as i64 - self.size[a] as i64)
                    .expect("three areas");
                self.reclaim(over, dev)?;
            } else {
                self.reclaim(area, dev)?;
            }
        }
    }

    fn reclaim(&mut self, area: usize, dev: &mut Device) -> Result<()> {
        if area == CA {
            self.reclaim_ca(dev)
        } else {
            self.reclaim_oldest(area, dev)
        }
    }

    /// CA's block for a cold page, or None if CA could only make one by reclaiming a block being emptied.
    fn ca_slot(&mut self, dev: &mut Device) -> Result<Option<u32>> {
        if let Some(&back) = self.queue[CA].back() {
            if !self.blocks.log.is_full(back) {
                return Ok(Some(back));
            }
        }
        if (self.queue[CA].len() as u32) < self.size[CA] {
            if let Some(slot) = self.free_slot() {
                return self.open(CA, slot, dev).map(Some);
            }
        }
        if self.queue[CA].is_empty() {
            return match self.free_slot() {
                Some(slot) => self.open(CA, slot, dev).map(Some),
                None => Ok(None),
            };
        }
        self.reclaim_ca(dev)?;
        let slot = self.free_slot().expect("a CA merge frees a slot");
        self.open(CA, slot, dev).map(Some)
    }

    /// LA or HA gives back its oldest block (§2.1, §2.2).
    fn reclaim_oldest(&mut self, area: usize, dev: &mut Device) -> Result<()> {
        let Some(victim) = self.queue[area].pop_front() else {
            return Err(dev.out_of_space("an empty log area asked to give a block back"));
        };
        // Out of its area's utilization while it is emptied.
        self.blocks.log.set_group(victim, FREE);
        self.sample_utilization();
        if area == LA && self.blocks.log.live(victim) > self.migrate_valid_pages {
            // Whole-block migration: the block joins CA as it is, before CA's block being filled.
            self.area[victim as usize] = CA as u8;
            self.blocks.log.set_group(victim, CA as u8);
            let at = match self.queue[CA].back() {
                Some(&b) if !self.blocks.log.is_full(b) => self.queue[CA].len() - 1,
                _ => self.queue[CA].len(),
            };
            self.queue[CA].insert(at, victim);
            self.migrated_blocks += 1;
            return Ok(());
        }
        dev.record_log_utilization(self.blocks.log.written(victim));
        let live = self.blocks.log.live(victim) > 0;
        let mark = if live {
            dev.begin_gc()
        } else {
            dev.begin_merge()
        };
        let mut moved = 0;
        for o in 0..self.blocks.log.written(victim) {
            if self.blocks.log.state(victim, o) != PageState::Live {
                continue;
            }
            let Some(lpn) = self.blocks.log.lpn_at(victim, o) else {
                continue;
            };
            let Some(ca) = self.ca_slot(dev)? else {
                // Only on tiny configurations: merge what is left of the victim instead.
                self.fallback_merges += 1;
                self.blocks.merge_victim(dev, victim, false)?;
                self.area[victim as usize] = FREE;
                dev.end_gc(mark);
                return Ok(());
            };
            // A CA merge while finding room may have merged this page's logical block.
            if self.blocks.log.state(victim, o) != PageState::Live {
                continue;
            }
            debug_assert_eq!(self.blocks.log.lpn_at(victim, o), Some(lpn));
            self.blocks.move_random(victim, o, ca, CA as u32, dev)?;
            dev.count_moved_page();
            moved += 1;
        }
        self.moved[if area == LA { 0 } else { 1 }] += moved;
        let pbn = self.blocks.log.close(victim);
        dev.erase(pbn)?;
        self.blocks.pool.put(pbn);
        self.area[victim as usize] = FREE;
        if live {
            dev.end_gc(mark);
        } else {
            dev.end_merge(mark, MergeKind::Dead);
        }
        Ok(())
    }

    /// CA gives back a block: a dead one, else the most live pages, ties the fewest associated data blocks.
    fn reclaim_ca(&mut self, dev: &mut Device) -> Result<()> {
        self.sample_utilization();
        self.resize();
        // (queue index, live, associativity): the associativity, a scan of the block, only for a tie.
        let mut best: Option<(usize, u32, Option<u32>)> = None;
        for (i, &s) in self.queue[CA].iter().enumerate() {
            if !self.blocks.log.is_full(s) {
                continue;
            }
            let live = self.blocks.log.live(s);
            if live == 0 {
                best = Some((i, 0, None));
                break;
            }
            match best {
                Some((_, l, _)) if live < l => {}
                Some((b, l, assoc)) if live == l => {
                    let log = &mut self.blocks.log;
                    let held = assoc.unwrap_or_else(|| log.associativity(self.queue[CA][b]));
                    let mine = log.associativity(s);
                    best = Some(if mine < held {
                        (i, live, Some(mine))
                    } else {
                        (b, l, Some(held))
                    });
                }
                _ => best = Some((i, live, None)),
            }
        }
        let Some((index, _, _)) = best else {
            return Err(dev.out_of_space("no full CA block to merge"));
        };
        let victim = self.queue[CA].remove(index).expect("index from the queue");
        self.blocks.log.set_group(victim, FREE);
        self.blocks.merge_victim(dev, victim, false)?;
        self.area[victim as usize] = FREE;
        Ok(())
    }

    fn utilization(&self, area: usize) -> f64 {
        // The area's slots are exactly its group in the log blocks (a block being emptied is in none).
        let (live, written) = self.blocks.log.group_pages(area as u8);
        if written == 0 {
            0.0
        } else {
            live as f64 / written as f64
        }
    }

    fn sample_utilization(&mut self) {
        for a in [LA, HA, CA] {
            self.util_sum[a] += self.utilization(a);
        }
        self.util_samples += 1;
    }

    /// §3: trade blocks between LA and CA by CA's and HA's utilization.
    fn resize(&mut self) {
        if !self.dynamic_sizing {
            return;
        }
        let (ca, ha) = (self.utilization(CA), self.utilization(HA));
        self.ca_falling = match self.prev_ca_util {
            Some(prev) if ca < prev => self.ca_falling + 1,
            _ => 0,
        };
        let ha_rising = self.prev_ha_util.is_some_and(|prev| ha > prev);
        self.prev_ca_util = Some(ca);
        self.prev_ha_util = Some(ha);
        if (ca < self.ca_util_low || self.ca_falling >= 3) && self.size[CA] > self.ca_min_blocks {
            self.size[CA] -= 1;
            self.size[LA] += 1;
            self.resizes[0] += 1;
            self.ca_falling = 0;
        } else if ha > self.ha_util_high && ha_rising && self.size[LA] > 1 {
            self.size[LA] -= 1;
            self.size[CA] += 1;
            self.resizes[1] += 1;
        }
    }
}
