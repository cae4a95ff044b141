//! ftlsim-core: a trace-driven simulator of NAND flash and the Flash Translation Layers that run on it.
//!
//! The arrows point one way: `ftl/*` depend on [`device`] (which wraps [`nand`] and [`stats`]), never on
//! [`sim`], traces or Python; [`sim`] drives requests from [`trace`] through a scheme and builds the
//! [`report::Report`]. The layers, top to bottom (each imports only those below it; `tests/layers.rs` checks
//! that no import circle forms):
//!
//! ```text
//! sim                         the run loop; error::SimError wraps the errors below with #[from]
//! report, error
//! ftl                         the schemes: builders return ConfigError, reads and writes FlashError
//! device                      the chip as schemes see it; device::FlashError
//! bad_blocks, nand, stats     bad-block map, the chip, counters
//! config, trace               config::ConfigError (with config::Invalid); trace::TraceError
//! addr, request, sparse, text leaves
//! ```

pub mod addr;
pub mod array;
pub mod bad_blocks;
pub mod catalog;
pub mod config;
pub mod device;
pub mod error;
pub mod figure;
pub mod ftl;
pub mod generate;
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
