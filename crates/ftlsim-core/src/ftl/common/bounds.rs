//! Parameter bounds: every count, size and share a scheme takes is checked against a limit derived
//! from the device before anything is allocated, and every violation is reported at once, naming the scheme,
//! the key, the value, the limit and the fix.
//!
//! The physical size rule: a scheme adds at most as many blocks beyond the logical ones as there are logical
//! blocks (the chip is at most twice the host capacity), or [`MIN_LIMIT`] on a smaller device, and never so
//! many that a physical page address reaches `u32::MAX` (the "none" of `addr::Opt`). The cache rule: a cache
//! of page locations or page tables holds at most one entry per logical page, or [`MIN_LIMIT`] on a smaller
//! device.

use super::logblock_ram::paper_chip_blocks;
use crate::config::Geometry;
use crate::config::{ConfigError, Invalid};
use crate::device::Result;

/// The least a device-derived limit is, so that the papers' toy devices (4 blocks of 4 pages) run every
/// scheme's defaults (the largest unclamped one: `replacement`'s 64 replacement blocks + 1) and small caches.
pub const MIN_LIMIT: u32 = 128;

/// The most physical blocks a scheme may add beyond the logical ones on `g` (see the module doc).
pub fn extra_blocks_limit(g: &Geometry) -> u32 {
    let addressable = (u32::MAX / g.pages_per_block.max(1)).saturating_sub(1);
    g.logical_blocks
        .max(MIN_LIMIT)
        .min(addressable.saturating_sub(g.logical_blocks))
}

/// The extra blocks of a scheme whose chip is by default the TinyFTL paper's layout (24 blocks beyond the
/// host's in every 1,024, [`paper_chip_blocks`]) so that the log-block schemes run on the same chip: that
/// layout, or the `over_provisioning` the run states (set from its `extra_blocks`), but never fewer than
/// `need`, the blocks the scheme uses. A run can so give such a scheme a smaller chip than the layout's, down
/// to what it needs (MatiasBjorling/flashsim's 1,040 blocks for 1,024 logical ones and 16 log blocks).
pub fn layout_extra_blocks(g: &Geometry, over_provisioning: Option<f64>, need: u32) -> u32 {
    let spare = match over_provisioning {
        Some(op) => (g.logical_blocks as f64 * op).ceil() as u32,
        None => paper_chip_blocks(g.logical_blocks) - g.logical_blocks,
    };
    spare.max(need)
}

/// The most entries a cache of page locations or page tables may have on `g` (see the module doc).
pub fn cache_entries_limit(g: &Geometry) -> u32 {
    g.logical_pages().max(MIN_LIMIT)
}

/// Collects one scheme's out-of-range parameters; [`Checks::finish`] reports them all in one error.
pub struct Checks<'a> {
    scheme: &'a str,
    problems: Vec<Invalid>,
}

impl<'a> Checks<'a> {
    pub fn new(scheme: &'a str) -> Checks<'a> {
        Checks {
            scheme,
            problems: Vec::new(),
        }
    }

    /// `key` = `value` must be at least `min`; `why` says why (e.g. "one SW block and at least one RW block").
    pub fn at_least(&mut self, key: &str, value: u64, min: u64, why: &str) -> &mut Self {
        if value < min {
            self.problems.push(Invalid::new(
                key,
                value,
                format!("is below {min}, the least it can be ({why})"),
                Some(min.to_string()),
            ));
        }
        self
    }

    /// `key` = `value` must be at most `max`; `why` says where the limit comes from.
    pub fn at_most(&mut self, key: &str, value: u64, max: u64, why: &str) -> &mut Self {
        if value > max {
            self.problems.push(Invalid::new(
                key,
                value,
                format!("is above {max}, the most it can be ({why})"),
                Some(max.to_string()),
            ));
        }
        self
    }

    /// `key` = `value` adds `value + plus` physical blocks beyond the logical ones: at most
    /// [`extra_blocks_limit`] on `g`, less `others` blocks the scheme adds for other reasons.
    pub fn extra_blocks(
        &mut self,
        key: &str,
        value: u32,
        plus: u32,
        others: u32,
        g: &Geometry,
    ) -> &mut Self {
        let limit = extra_blocks_limit(g);
        let max = limit.saturating_sub(plus).saturating_sub(others);
        let adds = match (plus, others) {
            (0, 0) => key.to_string(),
            (p, 0) => format!("{key} + {p}"),
            (0, o) => format!("{key} + {o} other"),
            (p, o) => format!("{key} + {p} + {o} other"),
        };
        self.at_most(
            key,
            value as u64,
            max as u64,
            &format!(
                "the scheme adds {adds} physical blocks beyond the device's {} logical blocks, and a device takes at \
                 most {limit} beyond them: as many as its logical blocks, or {MIN_LIMIT} on a smaller \
                 device; a larger capacity raises the limit",
                g.logical_blocks
            ),
        )
    }

    /// `key` = `value` entries of a cache: at most [`cache_entries_limit`] on `g`.
    pub fn cache_entries(&mut self, key: &str, value: u32, g: &Geometry) -> &mut Self {
        self.at_most(
            key,
            value as u64,
            cache_entries_limit(g) as u64,
            &format!(
                "a cache holds at most one entry per logical page of the device ({}), or {MIN_LIMIT} on a smaller \
                 device",
                g.logical_pages()
            ),
        )
    }

    /// `key` = `value` must be a finite number in `[0, max]`; `what` names the quantity (e.g. "a share").
    pub fn number(&mut self, key: &str, value: f64, max: f64, what: &str) -> &mut Self {
        if !(value.is_finite() && (0.0..=max).contains(&value)) {
            self.problems.push(Invalid::new(
                key,
                value,
                format!("is not {what}: it must be a finite number from 0 to {max}"),
                Some(value.clamp(0.0, max).to_string()).filter(|_| !value.is_nan()),
            ));
        }
        self
    }

    /// An optional `over_provisioning` (see [`layout_extra_blocks`]): given, a fraction from 0 to 1.
    pub fn over_provisioning(&mut self, value: Option<f64>) -> &mut Self {
        match value {
            Some(op) => self.number(
                "over_provisioning",
                op,
                1.0,
                "a fraction of the logical capacity",
            ),
            None => self,
        }
    }

    /// `key` = `value` must be a share: a finite number in `[0, 1]`.
    pub fn share(&mut self, key: &str, value: f64) -> &mut Self {
        self.number(key, value, 1.0, "a share")
    }

    /// A problem no range expresses (a value not among the known ones, a relation between two keys): `key`
    /// = `value`, what is `expected` (naming any other key involved) and a value of `key` that would do.
    pub fn problem(
        &mut self,
        key: &str,
        value: impl std::fmt::Display,
        expected: impl Into<String>,
        suggestion: Option<String>,
    ) -> &mut Self {
        self.problems
            .push(Invalid::new(key, value, expected, suggestion));
        self
    }

    /// Every problem found, in one error naming the scheme.
    pub fn finish(&mut self) -> Result<(), ConfigError> {
        if self.problems.is_empty() {
            return Ok(());
        }
        Err(ConfigError::Invalid {
            within: Some(format!("scheme `{}`", self.scheme)),
            problems: std::mem::take(&mut self.problems),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry(logical_blocks: u32, pages_per_block: u32) -> Geometry {
        Geometry {
            page_bytes: 512,
            spare_bytes: 16,
            pages_per_block,
            logical_blocks,
            sequential_program: false,
        }
    }

    #[test]
    fn the_chip_at_most_doubles_with_a_floor_for_toy_devices_and_stays_addressable() {
        assert_eq!(extra_blocks_limit(&geometry(4, 4)), 128);
        assert_eq!(extra_blocks_limit(&geometry(128, 32)), 128);
        assert_eq!(extra_blocks_limit(&geometry(65_536, 32)), 65_536);
        // The largest device the geometry allows (u32::MAX / 2 / ppb blocks): doubled, every page address is
        // still below u32::MAX.
        let g = geometry(u32::MAX / 2 / 4096, 4096);
        let limit = extra_blocks_limit(&g);
        assert_eq!(limit, g.logical_blocks);
        assert!(((g.logical_blocks + limit) as u64 * 4096) < u32::MAX as u64);
        // A hand-made geometry beyond that: the limit shrinks to what is addressable.
        let g = geometry(u32::MAX / 4096 - 10, 4096);
        assert_eq!(extra_blocks_limit(&g), 9);
    }

    #[test]
    fn every_problem_is_reported_with_scheme_key_value_limit_and_fix() {
        let g = geometry(128, 32);
        let msg = Checks::new("fast")
            .extra_blocks("log_blocks", 65_536, 1, 0, &g)
            .share("ca_min_share", -0.5)
            .at_least(
                "spare_blocks",
                1,
                2,
                "a fold target and a replacement block",
            )
            .finish()
            .unwrap_err()
            .to_string();
        for part in [
            "scheme `fast`",
            "log_blocks=65536 is above 127",
            "log_blocks + 1",
            "e.g. log_blocks=127",
            "ca_min_share=-0.5",
            "from 0 to 1",
            "spare_blocks=1 is below 2",
        ] {
            assert!(msg.contains(part), "{part} not in {msg}");
        }
        assert!(Checks::new("fast")
            .extra_blocks("log_blocks", 127, 1, 0, &g)
            .share("s", 1.0)
            .finish()
            .is_ok());
    }
}
