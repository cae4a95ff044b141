//! The `Report`: one flat map of dotted keys to numbers and strings, serialisable to JSON and to one CSV row.
//! It keeps raw counts next to every ratio and echoes the resolved configuration and the version.

use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[serde(transparent)]
pub struct Report(pub BTreeMap<String, Value>);

impl Report {
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<Value>) {
        self.0.insert(key.into(), value.into());
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    /// A numeric figure; panics with the key's name if it is missing (for tests and benches).
    pub fn num(&self, key: &str) -> f64 {
        self.0
            .get(key)
            .and_then(Value::as_f64)
            .unwrap_or_else(|| panic!("report has no numeric key `{key}`"))
    }

    /// An integer count; panics with the key's name if it is missing (for tests and benches).
    pub fn count(&self, key: &str) -> u64 {
        self.0
            .get(key)
            .and_then(Value::as_u64)
            .unwrap_or_else(|| panic!("report has no count `{key}`"))
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.0).expect("a report is plain JSON")
    }
}

/// A finite float as JSON (NaN and infinities, e.g. a ratio over zero, become null).
pub fn num(v: f64) -> Value {
    serde_json::Number::from_f64(v)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}
