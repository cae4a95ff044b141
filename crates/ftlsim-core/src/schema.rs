//! The JSON Schema of a run's configuration (`SimConfig` with its `device` and `trace` sections), made from
//! the serde structs themselves by schemars, so that the front ends' options and the config reference can be
//! checked against the one definition.

use crate::sim::SimConfig;
use crate::trace::layout::devices::Devices;
use schemars::gen::SchemaGenerator;
use schemars::schema::{RootSchema, Schema, SchemaObject, SubschemaValidation};
use schemars::JsonSchema;

/// The schema of [`SimConfig`]: its properties with their types, defaults and doc comments; the `device` and
/// `trace` sections under `definitions`.
pub fn run_config() -> RootSchema {
    schemars::schema_for!(SimConfig)
}

/// `devices` is given as text (`fold`, `concat`, `"3,1"`), one device number or a list of them
/// (see `trace/layout/devices.rs`); it is written back as text.
impl JsonSchema for Devices {
    fn schema_name() -> String {
        "Devices".into()
    }

    fn json_schema(gen: &mut SchemaGenerator) -> Schema {
        SchemaObject {
            subschemas: Some(Box::new(SubschemaValidation {
                any_of: Some(vec![
                    gen.subschema_for::<String>(),
                    gen.subschema_for::<u64>(),
                    gen.subschema_for::<Vec<u64>>(),
                ]),
                ..Default::default()
            })),
            ..Default::default()
        }
        .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_section_key_is_in_the_schema() {
        let root = serde_json::to_value(run_config()).unwrap();
        let props = |v: &serde_json::Value| -> Vec<String> {
            v["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        };
        let catalog = crate::catalog::catalog();
        let mut run = props(&root);
        run.sort();
        let mut want = catalog.keys.run.clone();
        want.sort();
        assert_eq!(run, want);
        assert_eq!(
            props(&root["definitions"]["DeviceOverrides"]).len(),
            catalog.keys.device.len()
        );
        assert_eq!(
            props(&root["definitions"]["TraceOptions"]).len(),
            catalog.keys.trace.len()
        );
        // A default is recorded with its value, a doc comment as the description.
        assert_eq!(
            root["properties"]["idle_threshold_us"]["default"],
            100_000.0
        );
        assert!(root["properties"]["wrap"]["description"]
            .as_str()
            .unwrap()
            .contains("modulo capacity"));
    }
}
