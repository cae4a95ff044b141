//! A host request: what a trace line or a workload generator produces, in bytes.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    Trim,
}

/// What the file system wrote: data or metadata. Traces without the information say `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tag {
    #[default]
    None,
    Data,
    Metadata,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Request {
    /// Arrival time in microseconds from the trace's start (0 where the trace has no times).
    pub time_us: f64,
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    pub tag: Tag,
}

impl Request {
    pub fn new(time_us: f64, op: Op, offset: u64, len: u64) -> Request {
        Request {
            time_us,
            op,
            offset,
            len,
            tag: Tag::None,
        }
    }
}
