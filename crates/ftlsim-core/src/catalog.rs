//! What the engine offers, as one value: the schemes, presets, workloads and trace formats `ftlsim list`
//! shows, the keys of each configuration section with the run's defaults, the report's kinds and the version.
//! The front ends read this instead of assembling their own lists.

use crate::config::{DeviceOverrides, Preset, PRESETS};
use crate::ftl::SCHEMES;
use crate::sim::SimConfig;
use crate::stats::{CacheKind, Cause, MergeKind};
use crate::trace::workloads::workload::{WorkloadInfo, WORKLOADS};
use crate::trace::{TraceOptions, FORMATS};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Debug, Serialize)]
pub struct Catalog {
    pub schemes: Vec<SchemeInfo>,
    pub presets: &'static [Preset],
    pub workloads: &'static [WorkloadInfo],
    pub formats: Vec<FormatSummary>,
    /// The keys each configuration section takes (`device`, `trace`, `run`).
    pub keys: SectionKeys,
    /// The run configuration with every default.
    pub defaults: SimConfig,
    /// The names of merge kinds, cache kinds and causes of flash work, as report keys spell them.
    pub kinds: Kinds,
    /// Keys whose own bound is tighter than their type's: what a value must be, and one that fits (for a
    /// value past 64 bits, which a front end refuses before the engine sees it).
    pub bounds: BTreeMap<String, OwnBound>,
    pub version: &'static str,
}

#[derive(Debug, Serialize)]
pub struct OwnBound {
    pub expected: String,
    pub suggestion: String,
}

/// A scheme's registry row without its functions: its parameters with their defaults.
#[derive(Debug, Serialize)]
pub struct SchemeInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub citation: &'static str,
    pub defaults: Value,
}

#[derive(Debug, Serialize)]
pub struct FormatSummary {
    pub name: &'static str,
    pub summary: &'static str,
}

#[derive(Debug, Serialize)]
pub struct SectionKeys {
    pub device: Vec<String>,
    pub trace: Vec<String>,
    pub run: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Kinds {
    pub merge: Vec<&'static str>,
    pub cache: Vec<&'static str>,
    pub cause: Vec<&'static str>,
}

/// The catalog of this build of the engine.
pub fn catalog() -> Catalog {
    let keys = SectionKeys {
        device: keys_of(&DeviceOverrides::default()),
        trace: keys_of(&TraceOptions::default()),
        run: keys_of(&SimConfig::default()),
    };
    // The keys with a bound of their own tighter than their type's.
    let bounds = keys
        .device
        .iter()
        .chain(&keys.run)
        .filter_map(|key| {
            let (expected, suggestion) = crate::array::own_bound(key)?;
            Some((
                key.clone(),
                OwnBound {
                    expected,
                    suggestion,
                },
            ))
        })
        .collect();
    Catalog {
        schemes: SCHEMES
            .iter()
            .map(|s| SchemeInfo {
                name: s.name,
                summary: s.summary,
                citation: s.citation,
                defaults: (s.defaults)(),
            })
            .collect(),
        presets: PRESETS,
        workloads: WORKLOADS,
        formats: FORMATS
            .iter()
            .map(|f| FormatSummary {
                name: f.name,
                summary: f.summary,
            })
            .collect(),
        keys,
        defaults: SimConfig::default(),
        kinds: Kinds {
            merge: MergeKind::ALL.iter().map(|k| k.name()).collect(),
            cache: CacheKind::ALL.iter().map(|k| k.name()).collect(),
            cause: Cause::ALL.iter().map(|k| k.name()).collect(),
        },
        bounds,
        version: crate::VERSION,
    }
}

/// The keys a configuration section serialises with (every field: the sections serialise `None` as null).
fn keys_of(section: &impl Serialize) -> Vec<String> {
    match serde_json::to_value(section) {
        Ok(Value::Object(map)) => map.keys().cloned().collect(),
        _ => Vec::new(),
    }
}
