//! The Scheme section: a scheme's own figures (`dftl.*`, `mast.*`, ...) and the NVRAM cache's (`nvram.*`),
//! each declared with its unit and meaning on the scheme's registry row ([`crate::ftl::Scheme::figures`]).

use super::keys::{Component, Figure, Keys, Section, Unit};
use crate::ftl::{nvram, Extra, SCHEMES};
use serde_json::Value;

/// Every declared figure: each registered scheme's, then the NVRAM cache's (which wraps any scheme).
pub fn declared() -> impl Iterator<Item = &'static Figure> {
    SCHEMES
        .iter()
        .flat_map(|s| s.figures.iter())
        .chain(nvram::FIGURES.iter())
}

/// Whether `key` is the figure `pattern` names: equal, or equal but for one `<...>` part, which stands for a
/// non-empty name chosen at run time.
pub fn matches(pattern: &str, key: &str) -> bool {
    match (pattern.split_once('<'), pattern.split_once('>')) {
        (Some((prefix, _)), Some((_, suffix))) => {
            key.len() > prefix.len() + suffix.len()
                && key.starts_with(prefix)
                && key.ends_with(suffix)
        }
        _ => pattern == key,
    }
}

/// The figure that declares `key`, if any.
pub fn figure_of(key: &str) -> Option<&'static Figure> {
    declared().find(|f| matches(f.key, key))
}

/// A schema walk's value for a figure of `unit`.
fn placeholder(unit: Unit) -> Value {
    if unit == Unit::Text {
        "".into()
    } else {
        0.into()
    }
}

/// The scheme's own figures of one run, as the scheme (and the NVRAM cache) gave them.
pub(crate) struct SchemeFigures<'a>(pub &'a Extra);

impl Component for SchemeFigures<'_> {
    fn visit(&self, k: &mut Keys) {
        k.section(Section::Scheme);
        if k.schema() {
            let mut seen = std::collections::BTreeSet::new();
            for f in declared().filter(|f| seen.insert(f.key)) {
                let placeholder = placeholder(f.unit);
                k.shown(f.table)
                    .put(f.key, f.unit, f.description, placeholder);
            }
            return;
        }
        for (key, value) in self.0 {
            // An undeclared key still reaches the report (the schema coverage test names it).
            let undeclared = Figure {
                key: "",
                unit: if value.is_string() {
                    Unit::Text
                } else {
                    Unit::Count
                },
                description: "",
                table: false,
            };
            let f = figure_of(key).unwrap_or(&undeclared);
            k.shown(f.table)
                .put(key.clone(), f.unit, f.description, value.clone());
        }
    }
}
