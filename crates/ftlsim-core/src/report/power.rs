//! The Power loss section: a crash test's power cuts (`power_cuts`) and the mounts from flash after them.

use super::keys::{num, Component, Keys, Section, Unit};

/// A crash test's figures (`power_cuts`) and the cost of mounting the scheme from flash.
#[derive(Clone, Copy, Debug, Default)]
pub struct PowerFigures {
    /// Distinct cut points the dry run chose (`power_cuts` of them, fewer when two draws coincide or the run
    /// has fewer flash operations).
    pub cuts_planned: u64,
    pub cuts: u64,
    pub cuts_survived: u64,
    pub cuts_in_merge_or_gc: u64,
    pub cuts_in_map_io: u64,
    /// Cuts that tore the page program they landed on (`torn_pages`).
    pub torn_pages: u64,
    /// Torn pages a merge or garbage collection was programming (a copy, or a host write folded in).
    pub torn_in_merge_or_gc: u64,
    pub pages_checked: u64,
    /// Pages of the host writes a cut interrupted that were never acknowledged: the page it landed on and the
    /// rest of its request (`host.write_pages` counts written pages only).
    pub write_pages_dropped: u64,
    pub mounts: u64,
    pub mount_spare_reads: u64,
    pub mount_page_reads: u64,
    pub mount_time_us_sum: f64,
    pub mount_time_us_max: f64,
    /// Mounts the array model timed (all of them where it is on), and their times from power-on.
    pub mounts_on_array: u64,
    pub mount_array_us_sum: f64,
    pub mount_array_us_max: f64,
}

impl PowerFigures {
    /// A run with power cuts or a mount has the `power.*` and `mount.*` keys; others have neither.
    fn reported(&self, k: &Keys) -> bool {
        self.mounts > 0 || self.cuts_planned > 0 || k.schema()
    }
}

/// The power cuts (`power.*`).
pub(crate) struct Power<'a>(pub &'a PowerFigures);

impl Component for Power<'_> {
    fn visit(&self, k: &mut Keys) {
        let p = self.0;
        if !p.reported(k) {
            return;
        }
        k.section(Section::Power).shown(true);
        k.put(
            "power.cuts_planned",
            Unit::Count,
            "distinct cut points a dry run of the same trace chose (power_cuts of them, fewer when draws \
             coincide); a cut drops the rest of its request, so the run does fewer operations than the dry run \
             and the last points can fall past its end",
            p.cuts_planned,
        );
        k.put(
            "power.cuts",
            Unit::Count,
            "power cuts of a crash test that landed (at most power.cuts_planned)",
            p.cuts,
        );
        k.put(
            "power.cuts_survived",
            Unit::Count,
            "cuts after which the mount and the durability check succeeded",
            p.cuts_survived,
        );
        k.put(
            "power.write_pages_dropped",
            Unit::Pages,
            "pages of host writes a cut interrupted, never acknowledged: the page it landed on and the rest of its \
             request (not in host.write_pages, so not in write_amplification)",
            p.write_pages_dropped,
        );
        k.shown(false);
        for (key, unit, what, value) in [
            (
                "power.cuts_in_merge_or_gc",
                Unit::Count,
                "cuts that landed inside a merge or garbage collection",
                p.cuts_in_merge_or_gc,
            ),
            (
                "power.cuts_in_map_io",
                Unit::Count,
                "cuts that landed on an operation of the scheme's mapping pages",
                p.cuts_in_map_io,
            ),
            (
                "power.torn_pages",
                Unit::Count,
                "cuts that tore the page program they landed on (torn_pages)",
                p.torn_pages,
            ),
            (
                "power.torn_in_merge_or_gc",
                Unit::Count,
                "torn pages that a merge or garbage collection was programming",
                p.torn_in_merge_or_gc,
            ),
            (
                "power.pages_checked",
                Unit::Pages,
                "logical pages read back and checked after the mounts",
                p.pages_checked,
            ),
        ] {
            k.put(key, unit, what, value);
        }
    }
}

/// The mounts from flash (`mount.*`): after each power cut, and once at the end with `mount_at_end`.
pub(crate) struct Mount<'a>(pub &'a PowerFigures);

impl Component for Mount<'_> {
    fn visit(&self, k: &mut Keys) {
        let p = self.0;
        if !p.reported(k) {
            return;
        }
        k.section(Section::Power);
        k.put("mount.count", Unit::Count, "mounts from flash", p.mounts);
        k.shown(true);
        k.put(
            "mount.spare_reads",
            Unit::Count,
            "spare reads of all mounts",
            p.mount_spare_reads,
        );
        k.put(
            "mount.page_reads",
            Unit::Count,
            "page reads of all mounts",
            p.mount_page_reads,
        );
        k.put(
            "mount.time_us.mean",
            Unit::Us,
            "modeled time of a mount (boot), mean: its flash operations one after another (on an array too; \
             mount.array_time_us has the dies at once)",
            num(p.mount_time_us_sum / p.mounts as f64),
        );
        k.put(
            "mount.time_us.max",
            Unit::Us,
            "modeled time of a mount (boot), longest: its flash operations one after another (on an array too; \
             mount.array_time_us has the dies at once)",
            num(p.mount_time_us_max),
        );
        if p.mounts_on_array == 0 && !k.schema() {
            return;
        }
        let mean = p.mount_array_us_sum / p.mounts_on_array.max(1) as f64;
        k.put(
            "mount.array_time_us.mean",
            Unit::Us,
            "a mount's time on the array (multi-chip model), mean: from power-on on idle dies and channels until \
             its last flash operation ends, each on its die and channel as a request's are, so the dies scan \
             at once",
            num(mean),
        );
        k.put(
            "mount.array_time_us.max",
            Unit::Us,
            "a mount's time on the array (multi-chip model), longest: from power-on until its last flash \
             operation ends, the dies scanning at once",
            num(p.mount_array_us_max),
        );
    }
}
