//! The Merges and GC section: merges by kind, garbage collection, and how full log blocks were when replaced.

use super::keys::{num, Component, Keys, Section, Unit};
use crate::stats::{MergeKind, MergeTotals};
use serde_json::Value;

/// What a merge of `kind` did, for `merges.<kind>`.
fn merge_description(kind: MergeKind) -> &'static str {
    match kind {
        MergeKind::Switch => {
            "switch merges: a log block written wholly in order became the data block (one erase, no copy)"
        }
        MergeKind::Partial => {
            "partial merges: the pages a log block lacked were copied into it from its data block, and it became \
             the data block (one erase)"
        }
        MergeKind::Full => {
            "full merges: the newest copy of each page of a logical block, from its data block and log blocks, \
             copied to a free block that became the data block; the old data block erased, and each log block \
             once it held nothing valid (FAST: one full merge per logical block its victim log block holds)"
        }
        MergeKind::Dead => {
            "dead merges: a log block with no valid page left (all overwritten since), only erased, no copy"
        }
        MergeKind::Fold => "folds: NFTL's merge of a primary block and its replacement block",
    }
}

/// Merges, garbage collection and log-block utilization, as the device recorded them.
pub(crate) struct Merges<'a> {
    pub merges: &'a [MergeTotals; MergeKind::COUNT],
    pub gc_runs: u64,
    pub gc_copied_pages: u64,
    /// Pages written in a log block when it was replaced: index = pages.
    pub log_utilization: &'a [u64],
    pub pages_per_block: u32,
}

impl Component for Merges<'_> {
    fn visit(&self, k: &mut Keys) {
        k.section(Section::MergesAndGc);
        let (mut merges, mut merge_erases) = (0, 0);
        for kind in MergeKind::ALL {
            let m = self.merges[*kind as usize];
            let name = kind.name();
            k.shown(true).put(
                format!("merges.{name}"),
                Unit::Count,
                merge_description(*kind),
                m.count,
            );
            k.shown(false).put(
                format!("merges.{name}.erases"),
                Unit::Count,
                &format!("erases done by {name} merges"),
                m.erases,
            );
            k.put(
                format!("merges.{name}.copied_pages"),
                Unit::Pages,
                &format!("pages copied by {name} merges"),
                m.copied_pages,
            );
            merges += m.count;
            merge_erases += m.erases;
        }
        k.put("merges.total", Unit::Count, "merges of every kind", merges);
        k.shown(true).put(
            "merges.erases_per_merge",
            Unit::Ratio,
            "erases per merge",
            num(merge_erases as f64 / merges as f64),
        );
        k.put(
            "gc.runs",
            Unit::Count,
            "garbage-collection runs",
            self.gc_runs,
        );
        k.put(
            "gc.copied_pages",
            Unit::Pages,
            "pages copied by garbage collection",
            self.gc_copied_pages,
        );
        self.log_utilization(k);
    }
}

impl Merges<'_> {
    /// Only for schemes with log blocks (a block replaced at least once).
    fn log_utilization(&self, k: &mut Keys) {
        let replaced: u64 = self.log_utilization.iter().sum();
        if replaced == 0 && !k.schema() {
            return;
        }
        let written: u64 = (0u64..).zip(self.log_utilization).map(|(i, n)| i * n).sum();
        k.shown(false).put(
            "log_utilization.replacements",
            Unit::Count,
            "log blocks replaced",
            replaced,
        );
        k.shown(true).put(
            "log_utilization.mean",
            Unit::Ratio,
            "share of a log block's pages written when it was replaced (FAST paper Fig. 4)",
            num(written as f64 / (replaced * self.pages_per_block as u64) as f64),
        );
        k.shown(false).put(
            "log_utilization.histogram",
            Unit::Histogram,
            "log blocks replaced with each number of written pages (index = pages)",
            serde_json::to_value(self.log_utilization).unwrap_or(Value::Null),
        );
    }
}
