//! The Simulator section: the wall-clock figures of the simulator itself.

use super::keys::{num, Component, Keys, Section, Unit};

/// The wall-clock figures of the simulator itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct SimFigures {
    pub skipped_lines: u64,
    pub setup_s: f64,
    pub wall_s: f64,
    pub requests_per_s: f64,
    /// Page reads + page programs + erases (host and internal, every class) per wall second.
    pub flash_ops_per_s: f64,
    pub spare_reads_per_s: f64,
    pub chip_memory_bytes: u64,
    /// The read oracle's: the newest token of every logical page.
    pub oracle_memory_bytes: u64,
}

impl Component for SimFigures {
    fn visit(&self, k: &mut Keys) {
        k.section(Section::Simulator);
        k.put(
            "sim.skipped_lines",
            Unit::Count,
            "trace lines skipped (skip_bad_lines)",
            self.skipped_lines,
        );
        k.put(
            "sim.setup_s",
            Unit::Seconds,
            "wall time before the first request",
            num(self.setup_s),
        );
        k.shown(true);
        for (key, unit, what, value) in [
            (
                "sim.wall_s",
                Unit::Seconds,
                "wall time of the request loop",
                self.wall_s,
            ),
            (
                "sim.requests_per_s",
                Unit::PerSecond,
                "host requests simulated per wall second",
                self.requests_per_s,
            ),
            (
                "sim.flash_ops_per_s",
                Unit::PerSecond,
                "flash page reads + programs + erases simulated per wall second",
                self.flash_ops_per_s,
            ),
            (
                "sim.spare_reads_per_s",
                Unit::PerSecond,
                "spare-area reads simulated per wall second",
                self.spare_reads_per_s,
            ),
        ] {
            k.put(key, unit, what, num(value));
        }
        k.shown(false).put(
            "sim.chip_memory_bytes",
            Unit::Bytes,
            "host memory the chip model holds",
            self.chip_memory_bytes,
        );
        k.put(
            "sim.oracle_memory_bytes",
            Unit::Bytes,
            "host memory the read oracle holds (the newest token of every logical page)",
            self.oracle_memory_bytes,
        );
    }
}
