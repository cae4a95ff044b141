//! What a report key is (name, unit, section, meaning) and the walk that writes keys: each component of the
//! report ([`Component`]) names its own keys through [`Keys`], and the same walk gives a report's values or the
//! schema. A leaf: the schemes declare their own figures with [`Figure`] and [`Unit`] from here.

pub use crate::figure::{Figure, Unit};
use serde::Serialize;
use serde_json::Value;

/// The report's sections, in the order the command line prints them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Section {
    Config,
    Host,
    Flash,
    #[serde(rename = "Merges and GC")]
    MergesAndGc,
    Caches,
    Time,
    Latency,
    #[serde(rename = "Response time")]
    Response,
    #[serde(rename = "Wear and RAM")]
    WearAndRam,
    #[serde(rename = "Power loss")]
    Power,
    Scheme,
    Simulator,
}

/// One key of the report: its name (a `<...>` part stands for a name chosen at run time), unit, section,
/// meaning, and whether `ftlsim run` shows it in its table.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct KeyInfo {
    pub key: String,
    pub unit: Unit,
    pub section: Section,
    pub description: String,
    pub table: bool,
}

/// Receives the report's keys.
pub(crate) trait Sink {
    /// True when describing every key a report can have (the schema), not the keys of one report.
    fn schema(&self) -> bool;
    fn put(&mut self, info: KeyInfo, value: Value);
}

/// A part of the report that names its own keys, with units and meanings (MQSim's shape: each component
/// reports its own sub-tree; [`super::Report::visit`] only assembles them in order). In a schema walk it
/// names every key it can have, with placeholder values.
pub(crate) trait Component {
    fn visit(&self, k: &mut Keys);
}

/// Writes keys in one section with one walk: `k.put(key, unit, description, value)`.
pub(crate) struct Keys<'a> {
    sink: &'a mut dyn Sink,
    section: Section,
    table: bool,
}

impl<'a> Keys<'a> {
    pub(crate) fn new(sink: &'a mut dyn Sink) -> Self {
        Keys {
            sink,
            section: Section::Config,
            table: false,
        }
    }

    pub(crate) fn put(
        &mut self,
        key: impl Into<String>,
        unit: Unit,
        description: &str,
        value: impl Into<Value>,
    ) {
        self.sink.put(
            KeyInfo {
                key: key.into(),
                unit,
                section: self.section,
                description: description.to_string(),
                table: self.table,
            },
            value.into(),
        );
    }

    /// The keys that follow belong to `section`, not shown in `ftlsim run`'s table until [`Keys::shown`].
    pub(crate) fn section(&mut self, section: Section) -> &mut Self {
        self.section = section;
        self.table = false;
        self
    }

    /// The keys that follow are (not) shown in `ftlsim run`'s table.
    pub(crate) fn shown(&mut self, table: bool) -> &mut Self {
        self.table = table;
        self
    }

    /// True in a schema walk: a component names the keys it only has on some runs.
    pub(crate) fn schema(&self) -> bool {
        self.sink.schema()
    }
}

/// A finite float as JSON (NaN and infinities, e.g. a ratio over zero, become null).
pub fn num(v: f64) -> Value {
    serde_json::Number::from_f64(v)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// A figure of `count` requests (a mean, a percentile) as JSON: null where there is none, as 0.0 would read as
/// requests served in no time.
pub fn num_of(count: u64, v: f64) -> Value {
    if count == 0 {
        Value::Null
    } else {
        num(v)
    }
}
