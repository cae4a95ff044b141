//! Trace formats: one reader per file behind `RequestSource`, units converted to bytes at the reader.

pub mod blkparse;
pub mod csv;
pub mod fiu;
pub mod most;
pub mod msr;
pub mod ssdsim;
pub mod umass;
pub mod vscsi;

use super::{FormatInfo, FormatWriter};

/// Every trace format, in sniffing order (most specific first). `disksim` never sniffs (its lines are
/// `ssdsim` lines with another time unit), so it must be named.
pub static FORMATS: &[FormatInfo] = &[
    vscsi::FORMAT,
    msr::FORMAT,
    umass::FORMAT,
    fiu::FORMAT,
    most::FORMAT,
    blkparse::FORMAT,
    ssdsim::SSDSIM,
    ssdsim::DISKSIM,
    csv::FORMAT,
];

/// Every format ftlsim writes.
pub static WRITERS: &[FormatWriter] = &[csv::WRITER, ssdsim::WRITER, blkparse::WRITER];
