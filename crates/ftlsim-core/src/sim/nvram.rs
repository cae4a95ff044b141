//! Wiring a run's NVRAM write cache (`ftl/nvram.rs`) in front of its scheme, from the run's options.

use super::config::{resolve_device, SimConfig};
use crate::config::ConfigError;
use crate::config::Geometry;
use crate::error::{Result, SimError};
use crate::ftl::nvram::{Nvram, NvramOptions};
use crate::ftl::{Ftl, RamItem};

/// The RAM breakdown of a scheme on a device, without a trace.
pub fn ram(cfg: &SimConfig) -> Result<Vec<RamItem>> {
    let dev = resolve_device(cfg, None)?;
    let ftl = super::build_scheme(cfg, &dev.geometry)?.built.ftl;
    Ok(with_nvram(cfg, &dev.geometry, ftl)?.ram())
}

/// The NVRAM options of a run, if it has an NVRAM.
pub(super) fn nvram_options(cfg: &SimConfig, g: &Geometry) -> Result<Option<NvramOptions>> {
    match &cfg.nvram {
        None => {
            if cfg.nvram_regions.is_some() {
                return Err(SimError::Config(ConfigError::Param(
                    "nvram_regions is set but there is no NVRAM; pass nvram=SIZE too".into(),
                )));
            }
            Ok(None)
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
pub(super) fn with_nvram(cfg: &SimConfig, g: &Geometry, ftl: Box<dyn Ftl>) -> Result<Box<dyn Ftl>> {
    Ok(match nvram_options(cfg, g)? {
        Some(opts) => Box::new(Nvram::new(ftl, opts, g)),
        None => ftl,
    })
}
