//! The error of a run, at the top of the layers: it wraps the configuration's, the flash layer's and the
//! trace's errors, and adds the checks only a whole run can make (integrity, durability, capacity) and
//! cancelling. Every message names the thing, the value, the limit and the fix.

use crate::config::{ConfigError, Invalid, SizeError};
use crate::device::FlashError;
use crate::text::{format_size, thousands};
use crate::trace::TraceError;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum SimError {
    #[error(transparent)]
    Config(#[from] ConfigError),

    #[error(transparent)]
    Flash(#[from] FlashError),

    #[error(transparent)]
    Trace(#[from] TraceError),

    #[error(
        "integrity check failed in scheme `{scheme}`: logical page {lpn} should read token {expected} \
         but the chip returned {returned} (request #{request})"
    )]
    Integrity {
        scheme: String,
        lpn: u32,
        expected: String,
        returned: String,
        request: u64,
    },

    #[error("{at}: {}", capacity_problem(*end, *reach, *capacity, suggest, *used, *blocks_per_plane))]
    BeyondCapacity {
        /// Where the request came from: "path:line" for a trace file, else "request #N".
        at: String,
        end: u64,
        /// The furthest byte the trace's requests reach, where known beyond `end` (else `end`).
        reach: u64,
        capacity: u64,
        suggest: String,
        /// The fixes besides a larger capacity that the run already used: `wrap`, `compact`.
        used: Fixes,
        /// The blocks per plane the run gave: they sized the device, so more of them is the fix, not a capacity.
        blocks_per_plane: Option<u32>,
    },

    #[error("run cancelled")]
    Cancelled,

    #[error("{0}")]
    Durability(Box<DurabilityBroken>),
}

pub type Result<T> = std::result::Result<T, SimError>;

/// A page that read wrong after a power cut and a mount.
#[derive(Debug, Error)]
#[error(
    "durability broken by scheme `{scheme}` after power cut {cut} (before flash operation {op} of request \
     #{request}, {doing}) and mount: logical page {lpn} should read {expected} but read {returned}"
)]
pub struct DurabilityBroken {
    pub scheme: String,
    pub cut: u64,
    pub op: u64,
    pub request: u64,
    pub doing: String,
    pub lpn: u32,
    pub expected: String,
    pub returned: String,
}

/// The fixes of a request beyond the capacity, besides a larger capacity, that a run already used.
#[derive(Debug, Clone, Copy)]
pub struct Fixes {
    pub wrap: bool,
    pub compact: bool,
}

/// A request that ends at byte `end`, beyond the `capacity`, of a trace whose requests reach byte `reach`: a
/// larger capacity (`suggest`) fixes it, and so do `wrap` or `compact` where the run did not use them already.
fn capacity_problem(
    end: u64,
    reach: u64,
    capacity: u64,
    suggest: &str,
    used: Fixes,
    blocks_per_plane: Option<u32>,
) -> Invalid {
    let mut ends = format!(
        "ends before byte {}, where the request ends",
        thousands(end)
    );
    if reach > end {
        ends += &format!(
            " (the trace's furthest request ends at byte {})",
            thousands(reach)
        );
    }
    // The capacity as a size one would give (16GiB), where a preset may have set it unseen.
    let size = format_size(capacity);
    let mut problem = match blocks_per_plane {
        // A capacity beside them is refused: the blocks that hold the trace are the fix.
        Some(blocks) if blocks > 0 && capacity > 0 => {
            let enough = reach.div_ceil(capacity.div_ceil(blocks as u64));
            let expected = format!("gives the device a logical capacity of {size}, which {ends}");
            Invalid::new(
                "blocks_per_plane",
                blocks,
                expected,
                Some(enough.to_string()),
            )
        }
        _ => Invalid::new(
            "capacity",
            size,
            format!("(the device's logical capacity) {ends}"),
            Some(suggest.to_string()),
        ),
    };
    if !used.wrap {
        problem = problem.or("wrap", true, "to fold addresses into the device");
    }
    if !used.compact {
        problem = problem.or(
            "compact",
            true,
            "to map the 1 MiB extents the trace touches densely onto the device",
        );
    }
    problem
}

impl From<Invalid> for SimError {
    fn from(problem: Invalid) -> SimError {
        SimError::Config(problem.into())
    }
}

impl From<SizeError> for SimError {
    fn from(e: SizeError) -> SimError {
        SimError::Config(e.into())
    }
}

impl SimError {
    /// A parameter problem said in free text (the configuration layer's [`ConfigError::Param`]).
    pub fn param(text: impl Into<String>) -> SimError {
        SimError::Config(ConfigError::Param(text.into()))
    }

    /// The parameters whose values were not allowed, each with its key, value, what was expected and a
    /// suggestion, for a front end to spell in its own words (empty for any other error). The message ends
    /// with them, as their Display spells them.
    pub fn invalid(&self) -> Vec<Invalid> {
        match self {
            SimError::Config(e) => e.invalid().to_vec(),
            SimError::BeyondCapacity {
                end,
                reach,
                capacity,
                suggest,
                used,
                blocks_per_plane,
                ..
            } => vec![capacity_problem(
                *end,
                *reach,
                *capacity,
                suggest,
                *used,
                *blocks_per_plane,
            )],
            _ => Vec::new(),
        }
    }

    /// A capacity error placed at `position` ("path:line") where the request source knows it.
    pub fn located(self, position: Option<String>) -> SimError {
        match (self, position) {
            (
                SimError::BeyondCapacity {
                    end,
                    reach,
                    capacity,
                    suggest,
                    used,
                    blocks_per_plane,
                    ..
                },
                Some(at),
            ) => SimError::BeyondCapacity {
                at,
                end,
                reach,
                capacity,
                suggest,
                used,
                blocks_per_plane,
            },
            (e, _) => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{DeviceOverrides, DeviceSpec};

    #[test]
    fn the_invalid_parameters_are_reached_from_the_top_error() {
        let bad = DeviceOverrides {
            pages_per_block: Some(1),
            ..Default::default()
        };
        let e = SimError::from(DeviceSpec::resolve(None, &bad).unwrap_err());
        assert_eq!(e.invalid().len(), 1);
        assert_eq!(
            (
                e.invalid()[0].key.as_str(),
                e.invalid()[0].suggestion.as_deref()
            ),
            ("pages_per_block", Some("64"))
        );
        assert!(SimError::Cancelled.invalid().is_empty());
    }
}
