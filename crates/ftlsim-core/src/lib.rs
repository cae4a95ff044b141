//! ftlsim-core: a trace-driven simulator of NAND flash and the Flash Translation Layers that run on it.
//!
//! The arrows point one way: `ftl/*` depend on [`device`] (which wraps [`nand`] and [`stats`]), never on
//! [`sim`], traces or Python; [`sim`] drives requests from [`trace`] through a scheme and builds the
//! [`report::Report`].

pub mod addr;
pub mod array;
pub mod bad_blocks;
pub mod config;
pub mod device;
pub mod error;
pub mod ftl;
pub mod nand;
pub mod report;
pub mod request;
pub mod sim;
pub mod sparse;
pub mod stats;
pub mod trace;

pub use error::SimError;

/// The crate version, echoed in every report.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
