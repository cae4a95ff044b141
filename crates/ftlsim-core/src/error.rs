//! The one error type of the engine. Every message names the thing, the value, the limit and the fix.

use crate::config::{ConfigError, Invalid, SizeError};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum SimError {
    #[error("NAND rule broken by scheme `{scheme}`: {what} (block {block}, page {page})")]
    NandRule {
        scheme: String,
        what: String,
        block: u32,
        page: u32,
    },

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

    #[error(
        "{at}: the request reaches byte {end} but the device's logical capacity is {capacity} bytes; \
         pass a larger capacity (e.g. capacity=\"{suggest}\"), wrap=true to fold addresses into the device, \
         or compact=true to map the 1 MiB extents the trace touches densely onto the device"
    )]
    BeyondCapacity {
        /// Where the request came from: "path:line" for a trace file, else "request #N".
        at: String,
        end: u64,
        capacity: u64,
        suggest: String,
    },

    #[error("scheme `{scheme}` ran out of free blocks: {what}; give it more spare blocks or a larger over-provisioning")]
    OutOfSpace { scheme: String, what: String },

    #[error("unknown {kind} `{name}`; valid names: {valid}")]
    Unknown {
        kind: &'static str,
        name: String,
        valid: String,
    },

    #[error("invalid parameter: {0}")]
    Param(String),

    #[error(transparent)]
    Config(#[from] ConfigError),

    #[error("{0}")]
    Trace(#[from] crate::trace::TraceError),

    #[error("run cancelled")]
    Cancelled,

    /// The power was cut (a crash test): the scheme's RAM is gone, the chip keeps what it holds.
    #[error("power cut before flash operation {} while {}", .0.op, .0.doing())]
    PowerCut(crate::device::CutPoint),

    #[error("{0}")]
    Durability(Box<DurabilityBroken>),

    #[error(
        "the chip ran out of good blocks: {went_bad} blocks went bad ({factory} from the factory, {grown} worn \
         out, the last at chip erase #{at_erase} of block {block}) and the reserve of {reserve} replacement \
         blocks is used up; raise bad_block_reserve, endurance, or lower bad_block_ratio"
    )]
    WornOut {
        went_bad: u32,
        factory: u32,
        grown: u32,
        reserve: u32,
        at_erase: u64,
        block: u32,
    },

    #[error(
        "scheme `{scheme}` cannot yet rebuild itself from flash after a power cut (no mount); \
         run it without power_cuts / mount_at_end"
    )]
    NoMount { scheme: String },

    #[error(
        "scheme `{scheme}` cannot mount: the chip holds {what}, which its writes never leave behind; this is \
         a bug in the scheme: report it with the trace and the power_cut_seed"
    )]
    Mount { scheme: String, what: String },
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

impl From<SizeError> for SimError {
    fn from(e: SizeError) -> SimError {
        SimError::Config(e.into())
    }
}

impl SimError {
    /// The parameters whose values were not allowed, each with its key, value, what was expected and a
    /// suggestion, for a front end to spell in its own words (empty for any other error).
    pub fn invalid(&self) -> &[Invalid] {
        match self {
            SimError::Config(e) => e.invalid(),
            _ => &[],
        }
    }

    /// A capacity error placed at `position` ("path:line") where the request source knows it.
    pub fn located(self, position: Option<String>) -> SimError {
        match (self, position) {
            (
                SimError::BeyondCapacity {
                    end,
                    capacity,
                    suggest,
                    ..
                },
                Some(at),
            ) => SimError::BeyondCapacity {
                at,
                end,
                capacity,
                suggest,
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
