//! What a report records of its trace: the format it was read as, its size and a hash of its content, so that
//! a saved run can be repeated exactly and a changed trace is noticed.

use super::keys::{Component, Keys, Section, Unit};
use crate::trace::{self, TraceOptions};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

/// The trace's facts. A built-in workload spec is its own content: format `workload`, no size or hash;
/// requests handed over in memory are format `memory`.
#[derive(Clone, Debug, Default)]
pub struct TraceFacts {
    pub format: String,
    pub bytes: Option<u64>,
    /// sha256 of the file's content, lowercase hex.
    pub sha256: Option<String>,
}

impl TraceFacts {
    /// The facts of trace `spec` read under `opts`: the format the options name, else the one sniffed with
    /// them (as the run reads it). A file the run has read can be read again; if it cannot, its size and hash
    /// are left out rather than failing a finished run.
    pub fn of(spec: &str, opts: &TraceOptions) -> TraceFacts {
        if trace::is_workload(spec) {
            return TraceFacts {
                format: "workload".into(),
                ..Default::default()
            };
        }
        let path = Path::new(spec);
        if !path.is_file() {
            return TraceFacts {
                format: "memory".into(),
                ..Default::default()
            };
        }
        let format = if opts.format == "auto" {
            trace::sniff(path, opts).map_or_else(|_| opts.format.clone(), |f| f.name.to_string())
        } else {
            opts.format.clone()
        };
        TraceFacts {
            format,
            bytes: std::fs::metadata(path).ok().map(|m| m.len()),
            sha256: sha256_of(path).ok(),
        }
    }
}

/// sha256 of a file's content, lowercase hex, read in 1 MiB chunks.
pub fn sha256_of(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

impl Component for TraceFacts {
    fn visit(&self, k: &mut Keys) {
        k.section(Section::Config);
        k.put(
            "config.trace_format",
            Unit::Text,
            "the format the trace was read as (sniffed when not given); workload for a built-in one, memory for \
             requests handed over in memory",
            self.format.clone(),
        );
        k.put(
            "config.trace_bytes",
            Unit::Bytes,
            "size of the trace file (null for a built-in workload)",
            self.bytes.map_or(Value::Null, Value::from),
        );
        k.put(
            "config.trace_sha256",
            Unit::Text,
            "sha256 of the trace file's content (null for a built-in workload)",
            self.sha256.clone().map_or(Value::Null, Value::from),
        );
    }
}
