//! A report figure's unit, and the figures a scheme declares on its registry row ([`crate::ftl::Scheme`]):
//! a leaf both the schemes and the report read, so that neither imports the other's module for it.

use serde::Serialize;

/// What a key measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Count,
    Pages,
    Bytes,
    Us,
    Seconds,
    Ratio,
    PerSecond,
    Text,
    Flag,
    Histogram,
}

/// A figure a scheme (or the NVRAM cache) reports of its own, declared on its registry row: the report's
/// schema lists it in the Scheme section. A `<...>` part of the key is chosen at run time.
#[derive(Clone, Copy, Debug)]
pub struct Figure {
    pub key: &'static str,
    pub unit: Unit,
    pub description: &'static str,
    /// Shown in `ftlsim run`'s table (when not zero); every figure is in the JSON and CSV.
    pub table: bool,
}
