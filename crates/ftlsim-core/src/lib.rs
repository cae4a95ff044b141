//! ftlsim-core: a trace-driven simulator of NAND flash and the Flash Translation Layers that run on it.
//!
//! The arrows point one way: `ftl/*` depend on [`device`] (which wraps [`nand`] and [`stats`]), never on
//! [`sim`], traces or Python; [`sim`] drives requests from [`trace`] through a scheme and builds the
//! [`report::Report`]. The layers, top to bottom (each imports only those below it; `tests/layers.rs` checks
//! that no import circle forms):
//!
//! ```text
//! catalog, generate, schema   what the binding asks: the registry listing, trace writing, the config's schema
//! sim                         the run: RunPlan, open(plan), the loop and the read oracle; SimError wraps the rest
//! report                      the Report: one component per figure group, each naming its own keys
//! ftl, error                  the schemes (build: ConfigError; read, write, mount: FlashError); the top error
//! device                      the chip as schemes see it (device::FlashError), the array timeline's hook
//! bad_blocks                  the bad-block map
//! nand                        the chip: pages, blocks, NAND rules, counts
//! array, stats                the multi-chip event timeline; counters
//! config, trace               devices, presets, ConfigError and Invalid; formats, workloads, layout, analysis
//! addr, figure, request,      leaves
//!   sparse, text
//! ```

pub mod addr;
pub mod array;
pub mod bad_blocks;
mod cache_hint;
pub mod catalog;
pub mod config;
pub mod device;
pub mod error;
pub mod figure;
pub mod ftl;
pub mod generate;
mod high_bits;
pub mod nand;
pub mod report;
pub mod request;
pub mod schema;
pub mod sim;
pub mod sparse;
pub mod stats;
pub mod text;
pub mod trace;

pub use error::SimError;

/// The crate version, echoed in every report.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
