//! The resolved configuration a report echoes (`config.resolved`): what it takes to repeat the run exactly.

use super::config::SimConfig;
use crate::trace;
use serde_json::{json, Value};
use std::path::Path;

/// `cfg` with every default (its serialised form has every option), the scheme's parameters `params` as the
/// plan parsed them (every default filled in, the profile applied), and what the run resolved where `cfg` left it
/// open: the preset, the capacity in bytes `capacity_bytes` (unless blocks per plane sized the device, or a
/// trace file's reach did: `None`) and the trace format (`format`, sniffed). A capacity a trace's reach sized
/// is left to the repeat to size again: the same trace (its sha256 is checked) gives the same, and the repeat
/// of a report with another trace or device filter (`run -c REPORT --device 1`) sizes for what it reads, as
/// the first run did, rather than refusing requests past a capacity nobody gave. A trace file is named by its absolute path, so that
/// `ftlsim run -c report.json` finds it from anywhere. JSON text `{"trace": ..., "config": ...}`.
pub(super) fn resolved_config(
    cfg: &SimConfig,
    params: &Value,
    preset: &str,
    capacity_bytes: Option<u64>,
    format: &str,
    trace_spec: &str,
) -> String {
    let mut config = serde_json::to_value(cfg).expect("a SimConfig is plain data");
    config["params"] = params.clone();
    if cfg.preset.is_none() {
        config["preset"] = preset.into();
    }
    if let (None, None, Some(bytes)) = (&cfg.capacity, cfg.device.blocks_per_plane, capacity_bytes)
    {
        // (blocks per plane size the device themselves, and refuse a capacity beside them)
        config["capacity"] = bytes.to_string().into();
    }
    if cfg.trace.format == "auto" && format != "workload" && format != "memory" {
        config["trace"]["format"] = format.into();
    }
    let path = Path::new(trace_spec);
    let trace: Value = match std::path::absolute(path) {
        Ok(absolute) if path.exists() && !trace::is_workload(trace_spec) => {
            absolute.to_string_lossy().into()
        }
        _ => trace_spec.into(),
    };
    json!({"trace": trace, "config": config}).to_string()
}
