//! The Flash section: every chip operation, by cause, those on the scheme's mapping pages, and the write
//! amplification they make.

use super::keys::{num, Component, Keys, Section, Unit};
use crate::stats::{Cause, FlashCounts};

const FLASH_OPS: [(&str, &str); 5] = [
    ("page_reads", "page reads (data and spare area)"),
    ("spare_reads", "spare-area-only reads"),
    ("page_writes", "page programs"),
    ("spare_writes", "spare-area-only programs"),
    (
        "erases",
        "block erases (of the scheme's blocks: on a multi-chip array see array.block_erases)",
    ),
];

fn op_values(c: &FlashCounts) -> [u64; 5] {
    [
        c.page_reads,
        c.spare_reads,
        c.page_writes,
        c.spare_writes,
        c.erases,
    ]
}

/// The chip's operations, as the device counted them.
pub(crate) struct Flash<'a> {
    pub all: &'a FlashCounts,
    /// A partition of `all` by cause.
    pub by_cause: &'a [FlashCounts; Cause::COUNT],
    /// Operations on the scheme's own mapping pages for the workload (a part of `all`; a mount's and a crash
    /// test's check's are theirs).
    pub map: &'a FlashCounts,
    /// Pages the host wrote, the denominator of the write amplification.
    pub host_write_pages: u64,
}

impl Component for Flash<'_> {
    fn visit(&self, k: &mut Keys) {
        k.section(Section::Flash).shown(true);
        for ((op, what), value) in FLASH_OPS.iter().zip(op_values(self.all)) {
            k.put(
                format!("flash.{op}"),
                Unit::Count,
                &format!("all {what}"),
                value,
            );
        }
        k.shown(false);
        for cause in Cause::ALL.iter().filter(|c| **c != Cause::Nvram) {
            let counts = op_values(&self.by_cause[*cause as usize]);
            for ((op, what), value) in FLASH_OPS.iter().zip(counts) {
                k.put(
                    format!("flash.{op}.{}", cause.name()),
                    Unit::Count,
                    &format!(
                        "{what} caused by {} (time_us.cause.* says how causes are told apart)",
                        cause.name()
                    ),
                    value,
                );
            }
        }
        k.shown(true);
        let map = op_values(self.map);
        for ((op, what), value) in FLASH_OPS.iter().zip(map) {
            // The report has no map.spare_writes key (a key name is a contract: none is added here).
            if *op != "spare_writes" {
                k.put(
                    format!("map.{op}"),
                    Unit::Count,
                    &format!("{what} of the scheme's own mapping pages (not a mount's: mount.*)"),
                    value,
                );
            }
        }
        // A mount's programs (a map block rewritten at boot) are the boot's cost, not the workload's.
        let programs = self.all.page_writes
            - self.by_cause[Cause::Mount as usize].page_writes
            - self.by_cause[Cause::Check as usize].page_writes;
        k.put(
            "write_amplification",
            Unit::Ratio,
            "page programs per host page written (a mount's own programs, flash.page_writes.mount, left out)",
            num(programs as f64 / self.host_write_pages as f64),
        );
    }
}
