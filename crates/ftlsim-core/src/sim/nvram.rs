//! Wiring a run's NVRAM write cache (`ftl/nvram.rs`) in front of its scheme, from the run's options.

use super::config::SimConfig;
use super::plan::{resolve_device, SchemePlan};
use crate::config::{Geometry, Invalid};
use crate::error::{Result, SimError};
use crate::ftl::nvram::{Nvram, NvramOptions};
use crate::ftl::{Ftl, RamItem};

/// The RAM breakdown of a scheme on a device, without a trace.
pub fn ram(cfg: &SimConfig) -> Result<Vec<RamItem>> {
    let device = resolve_device(cfg, None)?;
    let (scheme, built) = SchemePlan::resolve(cfg, &device.scheme_geometry())?;
    let ftl = scheme.placed(&device, Some(built.ftl))?;
    let g = device.geometry;
    Ok(with_nvram(ftl, nvram_options(cfg, &g)?, &g).ram())
}

/// The NVRAM options of a run, parsed once: None when it has no NVRAM.
pub(super) fn nvram_options(cfg: &SimConfig, g: &Geometry) -> Result<Option<NvramOptions>> {
    match &cfg.nvram {
        None => {
            // An NVRAM option with no NVRAM to use it would do nothing.
            let fix = |e: Invalid| e.or("nvram", "128KiB", "to give it one of 128 KiB");
            if cfg.nvram_policy != SimConfig::default().nvram_policy {
                let why =
                    "needs an NVRAM write cache to run in, and the run has none: leave it out";
                return Err(fix(Invalid::new("nvram_policy", &cfg.nvram_policy, why, None)).into());
            }
            match &cfg.nvram_regions {
                Some(regions) => {
                    let why = "needs an NVRAM write cache to keep them in, and the run has none: leave it out";
                    Err(fix(Invalid::new("nvram_regions", regions, why, None)).into())
                }
                None => Ok(None),
            }
        }
        Some(size) => NvramOptions::parse(
            size,
            &cfg.nvram_policy,
            cfg.nvram_regions.as_deref(),
            cfg.nvram_read_us,
            cfg.nvram_write_us,
            cfg.nvram_flush_at_end,
            g,
        )
        .map(Some)
        .map_err(SimError::from),
    }
}

/// Puts the run's NVRAM write cache, if any, in front of a scheme.
pub(super) fn with_nvram(
    ftl: Box<dyn Ftl>,
    opts: Option<NvramOptions>,
    g: &Geometry,
) -> Box<dyn Ftl> {
    match opts {
        Some(opts) => Box::new(Nvram::new(ftl, opts, g)),
        None => ftl,
    }
}
