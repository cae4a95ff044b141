//! `last`: locality-aware sector translation (Lee, Shin, Kim and Kim, "LAST", ACM SIGOPS OSR 42(6), 2008), as
//! MAST (002, §1 and §4) and the public record describe it. The log buffer is split into a sequential log
//! buffer and a random log buffer; a locality detector sends a write to one or the other by its request
//! size; the random log buffer is split into a hot and a cold partition by the recency of each page's last
//! update, so that hot pages die together and their blocks are reclaimed with no copy at all.
//!
//! ```text
//! write(lpn): lbn, offset := lpn div N, lpn mod N
//!   the data block can take the page in place -> program it there
//!   lbn has a sequential log block S (pages 0..k in place):
//!     offset = k -> append to S; S full -> switch (S becomes the data block)
//!     offset > k -> partial merge of S, the page programmed at its offset (FAST Fig. 7a)
//!     offset < k -> partial merge of S, then the page goes on as below
//!   request bytes >= seq_threshold_bytes and offset = 0 -> a new sequential log block for lbn (all taken:
//!     the oldest is reclaimed: switch if full, else partial merge)
//!   otherwise -> random log buffer: hot partition if the page's previous write is among the last
//!     hot_window_pages page writes, else cold partition; append to the partition's open block; when it is
//!     full and no block is free, reclaim a victim:
//!       1. a dead block (no live page), oldest first: one erase, no copy ("dead" merge)
//!       2. the cold-partition block with the fewest associated data blocks (cheapest full merges)
//!       3. the hot-partition block with the fewest associated data blocks
//!     reclaiming = full merge of each logical block with a live page in the victim, then its erase
//! read(lpn): sequential log block of lbn if it holds the offset, else the newest random log page, else the
//!   data block
//! ```
//! RAM: the block map (as `fast`), the sequential log blocks (physical block, logical block, page count), the
//! random log blocks (physical block + partition bit), the sector map of the random log blocks (4 B per log
//! page, as FAST §3.2), and the recency table: the write count of each logical page's last update (4 B per
//! logical page; the memory overhead 002 §1 holds against LAST). Spare area: the logical page number.
//! Extra physical blocks: `log_blocks` + 1 (the free block a merge copies into).
//!
//! What this relies on. The LAST paper itself is not public in our sources; the public record read for this
//! file is its abstract (DGIST repository: a locality-aware FTL for general-purpose systems that "exploits
//! the locality of storage access patterns" and cuts garbage collection overhead by 54%), the abstract of its
//! successor LAST++ (Lee et al., ACM TOS 2014: "exploiting sequential and temporal localities"), and MAST
//! (002 §1: LAST "considers the temporal locality by distinguishing pages into hot page and cold page" and
//! "must save recency of each page"; §4.2: LAST has more switch and dead merges than FAST, and more full and
//! fewer partial merges than MAST). The size-based locality detector (4 KiB), the one-data-block association
//! of sequential log blocks, the hot/cold split of the random buffer and the victim order come from issue 5's
//! summary of LAST; everything below them is our choice:
//! - the recency test is a sliding window of page writes (`hot_window_pages`, default: half the random
//!   buffer's pages): a page is hot if it was written at most that many page writes ago;
//! - the two partitions share the random buffer's blocks with no fixed split (each block is tagged when
//!   opened); the hot partition's size is what the workload makes it, bounded by the victim order;
//! - a sequential log block starts only at offset 0 of a large request (as FAST's SW block): the head of a
//!   large request that starts mid-block goes to the random buffer; a write that continues a sequential log
//!   block's run appends to it whatever its size; the sequential blocks are reclaimed oldest first;
//! - a full sequential log block is switched at once (it frees a sequential slot);
//! - a write to a page a sequential log block holds (offset < k) first turns the block into the data block
//!   by a partial merge (cheaper than FAST's full merge of case 2.3) and then goes to the random buffer;
//! - a random log page superseded by a sequential log block's page is stale (no merge needed for it);
//! - a merged logical block is merged fully (every page from its newest copy), as FAST §3.4 does.

use super::common::bounds::Checks;
use super::common::log_blocks::sector_map_ram;
use super::common::seq_logs::{Associativity, HybridBlocks, SeqBlock};
use super::{address_bytes, defaults_of, parse_params, Built, Extra, Ftl, RamItem, Scheme};
use crate::addr::{Lpn, Token};
use crate::config::Geometry;
use crate::device::{Device, RequestInfo};
use crate::error::Result;
use crate::sparse::SparseVec;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const SCHEME: Scheme = Scheme {
    name: "last",
    summary: "sequential log buffer by request size; random log buffer split into hot and cold partitions",
    citation: "Lee, Shin, Kim, Kim 2008, LAST (ACM SIGOPS OSR 42(6)); as summarised by MAST (paper 002)",
    defaults: defaults_of::<LastParams>,
    build: build_last,
};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LastParams {
    /// Log blocks in all: `seq_log_blocks` sequential ones, the rest random.
    pub log_blocks: u32,
    /// Sequential log blocks; 0: `log_blocks / 16`, at least 1.
    pub seq_log_blocks: u32,
    /// A write of a request of at least this many bytes is sequential (the locality detector).
    pub seq_threshold_bytes: u64,
    /// A page written at most this many page writes after its previous write is hot; 0: half the pages of
    /// the random log buffer.
    pub hot_window_pages: u64,
}

impl Default for LastParams {
    fn default() -> Self {
        LastParams {
            log_blocks: 8,
            seq_log_blocks: 0,
            seq_threshold_bytes: 4096,
            hot_window_pages: 0,
        }
    }
}

const HOT: u8 = 0;
const COLD: u8 = 1;
const FREE: u8 = 2;

fn build_last(params: &Value, g: &Geometry) -> Result<Built> {
    let p: LastParams = parse_params("last", params)?;
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
    let extra = p.log_blocks + 1;
    let blocks = g.logical_blocks + extra;
    let ftl = LastFtl {
        ppb: g.pages_per_block,
        physical_blocks: blocks,
        seq_threshold_bytes: p.seq_threshold_bytes,
        request_bytes: 0,
        hot_window,
        seq: vec![None; seq as usize],
        seq_opened: vec![0; seq as usize],
        blocks: HybridBlocks::new(g, random, blocks),
        partition: vec![FREE; random as usize],
        opened: vec![0; random as usize],
        open: [None, None],
        clock: 0,
        last_write: SparseVec::new(g.logical_pages() as usize, 0),
        writes: 0,
        assoc: Associativity::new(g.logical_blocks),
        victims: [0; 3],
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
    seq: Vec<Option<SeqBlock>>,
    /// When each sequential log block was opened (for oldest-first reclaim).
    seq_opened: Vec<u64>,
    /// Data blocks, random log blocks (`blocks.log`) and free blocks.
    blocks: HybridBlocks,
    /// HOT, COLD or FREE, per random log slot.
    partition: Vec<u8>,
    opened: Vec<u64>,
    /// The block each partition appends to.
    open: [Option<u32>; 2],
    clock: u64,
    /// Write count (1-based) of each logical page's last update; 0: never written.
    last_write: SparseVec<u64>,
    writes: u64,
    assoc: Associativity,
    /// Victims reclaimed: dead, cold, hot.
    victims: [u64; 3],
    hot_writes: u64,
}

impl Ftl for LastFtl {
    fn begin_request(&mut self, req: &RequestInfo) {
        self.request_bytes = req.bytes;
    }

    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>> {
        let lbn = lpn.0 / self.ppb;
        let seq = self.seq_of(lbn).and_then(|i| self.seq[i]);
        self.blocks.read(lpn.0, seq, dev)
    }

    fn write(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        self.writes += 1;
        let previous = self.last_write.get(lpn.0 as usize);
        self.last_write.set(lpn.0 as usize, self.writes);
        if self.blocks.write_in_place(lpn.0, token, dev)? {
            return Ok(());
        }
        let (lbn, offset) = (lpn.0 / self.ppb, lpn.0 % self.ppb);
        if let Some(i) = self.seq_of(lbn) {
            let mut s = self.seq[i].expect("seq_of finds a block");
            if offset == s.pages {
                dev.program(dev.ppn(s.pbn, offset), token, lpn)?;
                self.blocks.log.supersede(lpn.0);
                s.pages += 1;
                self.seq[i] = Some(s);
                if s.pages == self.ppb {
                    self.reclaim_seq(i, None, dev)?;
                }
                return Ok(());
            }
            if offset > s.pages {
                return self.reclaim_seq(i, Some((offset, token)), dev);
            }
            self.reclaim_seq(i, None, dev)?;
        }
        if offset == 0 && self.request_bytes >= self.seq_threshold_bytes {
            return self.open_seq(lpn, token, dev);
        }
        let hot = previous != 0 && self.writes - previous <= self.hot_window;
        self.hot_writes += hot as u64;
        let slot = self.random_slot(if hot { HOT } else { COLD }, dev)?;
        dev.program(self.blocks.log.next_ppn(slot), token, lpn)?;
        self.blocks.log.append(slot, lpn.0);
        Ok(())
    }

    fn ram(&self) -> Vec<RamItem> {
        let entry = address_bytes(self.physical_blocks as u64);
        let (seq, random) = (self.seq.len() as u64, self.blocks.log.slots() as u64);
        let logical_pages = self.last_write.len() as u64;
        let mut ram = self.blocks.data.ram(self.physical_blocks);
        ram.push(RamItem::new(
            "seq_log_blocks",
            seq * (2 * entry + address_bytes(self.ppb as u64 + 1)),
            format!("{seq} x (physical block + logical block, {entry} B each, + page count)"),
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
            format!("{logical_pages} logical pages x 4 B (write count of the last update)"),
        ));
        ram
    }

    fn extra(&self, out: &mut Extra) {
        out.push(("last.victims.dead".into(), self.victims[0].into()));
        out.push(("last.victims.cold".into(), self.victims[1].into()));
        out.push(("last.victims.hot".into(), self.victims[2].into()));
        out.push(("last.hot_writes".into(), self.hot_writes.into()));
        out.push(("last.hot_window_pages".into(), self.hot_window.into()));
    }
}

impl LastFtl {
    fn seq_of(&self, lbn: u32) -> Option<usize> {
        self.seq
            .iter()
            .position(|s| s.is_some_and(|s| s.lbn == lbn))
    }

    fn reclaim_seq(
        &mut self,
        i: usize,
        incoming: Option<(u32, Token)>,
        dev: &mut Device,
    ) -> Result<()> {
        let s = self.seq[i].take().expect("a sequential log block");
        self.blocks.merge_seq(dev, s, incoming)?;
        Ok(())
    }

    /// Offset 0 of a large request: a new sequential log block for its logical block.
    fn open_seq(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        let i = match self.seq.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                let oldest = (0..self.seq.len())
                    .min_by_key(|&i| self.seq_opened[i])
                    .expect("at least one sequential log block");
                self.reclaim_seq(oldest, None, dev)?;
                oldest
            }
        };
        let pbn = self
            .blocks
            .pool
            .take()
            .ok_or_else(|| dev.out_of_space("no free block for a sequential log block"))?;
        dev.program(dev.ppn(pbn, 0), token, lpn)?;
        self.blocks.log.supersede(lpn.0);
        self.clock += 1;
        self.seq_opened[i] = self.clock;
        self.seq[i] = Some(SeqBlock {
            pbn,
            lbn: lpn.0 / self.ppb,
            pages: 1,
        });
        if self.ppb == 1 {
            self.reclaim_seq(i, None, dev)?;
        }
        Ok(())
    }

    /// The random log block partition `part` appends to, opening one (and reclaiming a victim) if needed.
    fn random_slot(&mut self, part: u8, dev: &mut Device) -> Result<u32> {
        if let Some(slot) = self.open[part as usize] {
            if !self.blocks.log.is_full(slot) {
                return Ok(slot);
            }
        }
        let slot = match self.partition.iter().position(|&p| p == FREE) {
            Some(free) => free as u32,
            None => self.reclaim_victim(dev)?,
        };
        let pbn = self
            .blocks
            .pool
            .take()
            .ok_or_else(|| dev.out_of_space("no free block for a random log block"))?;
        self.blocks.log.open(slot, pbn);
        self.partition[slot as usize] = part;
        self.clock += 1;
        self.opened[slot as usize] = self.clock;
        self.open[part as usize] = Some(slot);
        Ok(slot)
    }

    /// Reclaims a full random log block in LAST's order (dead, then cheapest cold, then cheapest hot) and
    /// returns its now free slot.
    fn reclaim_victim(&mut self, dev: &mut Device) -> Result<u32> {
        let mut dead: Option<u32> = None;
        let mut cheapest: [Option<(u32, u64, u32)>; 2] = [None, None];
        // Every full block is a candidate (a partition's open block too, once full).
        for s in 0..self.blocks.log.slots() {
            if self.partition[s as usize] == FREE || !self.blocks.log.is_full(s) {
                continue;
            }
            if self.blocks.log.live(s) == 0 {
                if dead.is_none_or(|d| self.opened[s as usize] < self.opened[d as usize]) {
                    dead = Some(s);
                }
                continue;
            }
            let part = self.partition[s as usize] as usize;
            let key = (
                self.assoc.of(&self.blocks.log, s, self.ppb),
                self.opened[s as usize],
            );
            if cheapest[part].is_none_or(|(a, o, _)| key < (a, o)) {
                cheapest[part] = Some((key.0, key.1, s));
            }
        }
        let (victim, class) = match (dead, cheapest[COLD as usize], cheapest[HOT as usize]) {
            (Some(d), _, _) => (d, 0),
            (None, Some((_, _, s)), _) => (s, 1),
            (None, None, Some((_, _, s))) => (s, 2),
            (None, None, None) => {
                return Err(dev.out_of_space("no full random log block to reclaim"));
            }
        };
        self.victims[class] += 1;
        let part = self.partition[victim as usize] as usize;
        if self.open[part] == Some(victim) {
            self.open[part] = None;
        }
        let seq = &self.seq;
        self.blocks.merge_victim(dev, victim, |lbn| {
            seq.iter().flatten().find(|s| s.lbn == lbn).copied()
        })?;
        self.partition[victim as usize] = FREE;
        Ok(victim)
    }
}
