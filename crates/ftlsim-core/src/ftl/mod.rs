//! The `Ftl` trait and the registry of schemes by name.
//!
//! A new scheme is one file in this folder plus one row in [`SCHEMES`].

pub mod bast;
pub mod block;
pub mod common;
pub mod dftl;
pub mod fast;
pub mod last;
pub mod mast;
pub mod nftl;
pub mod nvram;
pub mod page;
pub mod per_die;
pub mod replacement;
pub mod superblock;
pub mod tiny;

use crate::addr::{Lpn, Token};
use crate::config::Geometry;
use crate::config::{ConfigError, Invalid};
use crate::device::{Device, RequestInfo};
use crate::device::{FlashError, Result};
use crate::figure::Figure;
use crate::request::Op;
use common::profiles::Profile;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// One structure of a scheme's RAM, counted as an embedded controller stores it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RamItem {
    pub name: String,
    pub bytes: u64,
    /// How the figure is made: entries x entry size, and where the layout comes from.
    pub layout: String,
}

impl RamItem {
    pub fn new(name: &str, bytes: u64, layout: impl Into<String>) -> RamItem {
        RamItem {
            name: name.to_string(),
            bytes,
            layout: layout.into(),
        }
    }
}

/// Scheme-specific figures for the report, as (flat key, value).
pub type Extra = Vec<(String, Value)>;

/// How far ahead of the request that will use it a [`Ftl::prefetch`] hint comes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ahead {
    /// Two requests ahead: fetch the page's map entry.
    Far,
    /// The next request: the map entry has arrived; fetch what it points to.
    Near,
}

/// A flash translation layer. Schemes decide; the device's chip counts.
pub trait Ftl: Send {
    /// A hint, not an operation: a coming request will `op` logical page `lpn`, so the scheme may ask the host
    /// CPU to fetch the RAM it will touch (uniform random requests miss the cache on every map entry). It
    /// must change nothing and count nothing.
    fn prefetch(&self, _lpn: Lpn, _op: Op, _ahead: Ahead, _dev: &Device) {}

    /// A host request is about to be served: its size, tag and arrival time. Schemes that decide by request
    /// (LAST's size detector, the NVRAM's metadata policy) keep what they need; the rest ignore it.
    fn begin_request(&mut self, _req: &RequestInfo) {}

    /// Whether [`Ftl::begin_request`] keeps anything: a scheme that overrides it says so, so that an instance
    /// per die ([`per_die::PerDie`]) tells its instances of each request only where they listen.
    fn listens_to_requests(&self) -> bool {
        false
    }

    /// Returns the data token the chip holds for `lpn`, or None if it was never written.
    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>>;

    /// How many of the `pages` pages from `lpn` on [`Ftl::read`] would return None for without a flash
    /// operation or a change to the scheme, known without visiting them one by one (a map whose part for them
    /// was never written, a logical block with no physical block): the run counts them read at once (a trace
    /// that reads a large space it never wrote). 0, the default, where the scheme cannot tell at once.
    fn unmapped_from(&self, _lpn: Lpn, _pages: u32) -> u32 {
        0
    }

    /// What reads of `pages` pages [`Ftl::unmapped_from`] vouched for count besides flash operations, counted
    /// at once: an NVRAM cache's misses. Nothing by default.
    fn count_unmapped_reads(&mut self, _pages: u32, _dev: &mut Device) {}

    /// Stores `token` as the newest data of `lpn`.
    fn write(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()>;

    /// The host no longer needs `lpn`. Ignoring it is correct; a later read may return the old data or nothing.
    fn trim(&mut self, _lpn: Lpn, _dev: &mut Device) -> Result<()> {
        Ok(())
    }

    /// The trace is idle (a gap longer than the idle threshold): background work may run here. Its cost is
    /// reported as idle time and charged to no request.
    fn idle(&mut self, _dev: &mut Device) -> Result<()> {
        Ok(())
    }

    /// End of the trace: write caches flush what they hold. Reported separately.
    fn finish(&mut self, _dev: &mut Device) -> Result<()> {
        Ok(())
    }

    /// Preconditioning is over and the device's counters were zeroed: zero the scheme's own figures too.
    fn reset_counters(&mut self) {}

    /// The power was cut: forget every table held in RAM and rebuild it from the chip alone (spare areas, map
    /// blocks, reserved blocks), as the controller does at boot. What the scheme reads and writes here are real
    /// flash operations, reported as the mount's cost. A scheme that cannot mount says so (the default).
    fn mount(&mut self, dev: &mut Device) -> Result<()> {
        Err(FlashError::NoMount {
            scheme: dev.scheme().to_string(),
        })
    }

    /// Whether the mount detects and ignores a torn page (`torn_pages`: a program cut by the power loss, which
    /// reads back uncorrectable). A run with torn pages refuses a scheme that does not (the default).
    fn detects_torn_pages(&self) -> bool {
        false
    }

    /// The RAM the scheme's tables need on a controller, structure by structure.
    fn ram(&self) -> Vec<RamItem>;

    /// Scheme-specific figures for the report.
    fn extra(&self, _out: &mut Extra) {}
}

/// A scheme built for a geometry, with the physical blocks it needs beyond the logical ones.
pub struct Built {
    pub ftl: Box<dyn Ftl>,
    pub extra_blocks: u32,
}

/// What a scheme's map entry is for, which decides where a logical page goes when a scheme instance runs per
/// die (`ftl/per_die.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mapping {
    /// Any page anywhere (page-mapped, DFTL): a page goes to die `lpn mod dies`.
    Page,
    /// A logical block's pages kept together (block-mapped, hybrid): a page goes to die `lbn mod dies`.
    Block,
}

/// A row of the registry.
pub struct Scheme {
    pub name: &'static str,
    /// Its map's unit, for the per-die placement.
    pub mapping: Mapping,
    pub summary: &'static str,
    pub citation: &'static str,
    /// The parameters with their defaults, as JSON.
    pub defaults: fn() -> Value,
    /// The given parameters (JSON; absent ones at the row's defaults, its profile applied) as the scheme's
    /// typed configuration: [`parse_as`] with its params type. A run parses once, when its plan is resolved.
    pub parse: fn(&Scheme, &Value) -> Result<SchemeParams, ConfigError>,
    /// The scheme built for a geometry from its typed configuration. It checks each value against the limit
    /// the geometry sets (`common/bounds.rs`), so the first build, when the plan is resolved, reports them.
    pub build: fn(&SchemeParams, &Geometry) -> Result<Built, ConfigError>,
    /// The report keys of the scheme's own figures ([`Ftl::extra`]), with units and meanings: the report's
    /// schema lists them, and a key a scheme reports without one fails the schema's coverage test.
    pub figures: &'static [Figure],
    /// Its named parameter sets that behave as another simulator ([`common::profiles`]); empty for most.
    pub profiles: &'static [Profile],
    /// Small-parameter sets, beyond the defaults, that make each of its mechanisms fire on toy devices (few
    /// log blocks, one-entry caches: merges, misses and write-backs everywhere). `tests/invariants.rs` runs
    /// every scheme under each of them.
    pub stress_variants: fn() -> Vec<Value>,
    /// Whether it rebuilds itself from flash after a power cut, and how the crash suites cut it.
    pub mount: Option<Mounts>,
}

/// How a scheme that mounts ([`Ftl::mount`]) is crash-tested (`tests/power.rs` reads it).
pub struct Mounts {
    /// Parameter sets to cut it under, each a full set over the defaults; the first also runs behind every
    /// NVRAM policy.
    pub variants: fn() -> Vec<Value>,
    /// It keeps log blocks (hybrid mapping: data blocks written at their offsets, logs for their updates), whose
    /// appends and merges must keep the in-order (MLC) programming rule across a mount: the crash suites also
    /// cut it under that rule and on the MLC preset.
    pub log_blocks: bool,
    /// Its mount settles torn pages of log blocks and merge targets with `common/mechanisms/boot_scan.rs`'s
    /// `settle_torn`: the crash suites tear it on random workloads and expect torn merge copies.
    pub settles_torn_merges: bool,
}

/// Every scheme, in the order `ftlsim list` shows them.
pub static SCHEMES: &[Scheme] = &[
    page::SCHEME,
    dftl::SCHEME,
    block::SCHEME,
    bast::SCHEME,
    bast::ZONED,
    fast::SCHEME,
    fast::OFAST,
    nftl::SCHEME,
    replacement::SCHEME,
    tiny::SCHEME,
    superblock::SCHEME,
    last::SCHEME,
    mast::SCHEME,
];

pub fn scheme(name: &str) -> Result<&'static Scheme, ConfigError> {
    SCHEMES
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| ConfigError::Unknown {
            kind: "scheme",
            key: "ftl",
            name: name.to_string(),
            valid: SCHEMES
                .iter()
                .map(|s| s.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Declares [`SchemeParams`], one variant per params type, and how a scheme's build takes its own.
macro_rules! scheme_params {
    ($($variant:ident($params:ty)),* $(,)?) => {
        /// A scheme's configuration, typed: its params struct with every default filled in and its profile
        /// applied, as [`Scheme::parse`] made it. A run's plan holds it, its builds take it, and the report echoes
        /// it (serialised as the struct alone). One variant per params type; a variant of a scheme (`ofast`,
        /// `logblock-zoned`) shares its base's.
        #[derive(Clone, Debug, Serialize)]
        #[serde(untagged)]
        pub enum SchemeParams {
            $($variant($params)),*
        }

        $(
            impl From<$params> for SchemeParams {
                fn from(p: $params) -> SchemeParams {
                    SchemeParams::$variant(p)
                }
            }

            impl Params for $params {
                fn of(params: &SchemeParams) -> Option<&$params> {
                    match params {
                        SchemeParams::$variant(p) => Some(p),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
            }
        )*

        impl SchemeParams {
            /// The name of its params type, for the error of a build handed another scheme's.
            fn kind(&self) -> &'static str {
                match self {
                    $(SchemeParams::$variant(_) => stringify!($params)),*
                }
            }
        }
    };
}

scheme_params! {
    Page(page::PageParams),
    Dftl(dftl::DftlParams),
    Block(block::BlockParams),
    Bast(bast::BastParams),
    Fast(fast::FastParams),
    Nftl(nftl::NftlParams),
    Replacement(replacement::ReplacementParams),
    Tiny(tiny::TinyParams),
    Superblock(superblock::SuperblockParams),
    Last(last::LastParams),
    Mast(mast::MastParams),
}

/// A scheme's params struct: one variant of [`SchemeParams`].
pub trait Params: DeserializeOwned + Serialize + Default + Into<SchemeParams> {
    fn of(params: &SchemeParams) -> Option<&Self>;
}

impl SchemeParams {
    /// The parameters of scheme `scheme`, whose params type is `P`; a build handed another scheme's
    /// configuration (a caller's mistake) gets an error saying so.
    pub fn get<P: Params>(&self, scheme: &str) -> Result<&P, ConfigError> {
        P::of(self).ok_or_else(|| ConfigError::WrongParams {
            scheme: scheme.to_string(),
            given: self.kind(),
        })
    }

    /// As JSON: the params struct's fields (the report's `config.params`).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("a params struct is plain data")
    }
}

/// [`Scheme::parse`] for a scheme whose params type is `P`: the given parameters over the row's defaults, the
/// row's profile (`profile = "..."`, one of its `profiles`) applied, deserialised into `P`. Unknown keys and
/// wrong types are errors that name the key and list what the scheme takes.
pub fn parse_as<P: Params>(scheme: &Scheme, given: &Value) -> Result<SchemeParams, ConfigError> {
    let defaults = (scheme.defaults)();
    let given = if scheme.profiles.is_empty() {
        given.clone()
    } else {
        common::profiles::resolve(scheme.name, given, scheme.profiles)?
    };
    let params = with_defaults(defaults.clone(), &given);
    Ok(parse_params::<P>(scheme.name, &params, &defaults)?.into())
}

/// Scheme `name`'s typed configuration from the given parameters ([`Scheme::parse`]).
pub fn parse(name: &str, given: &Value) -> Result<SchemeParams, ConfigError> {
    let s = scheme(name)?;
    (s.parse)(s, given)
}

/// A scheme's parameters as they run, as JSON: its typed configuration ([`parse`]) serialised. The report's
/// echo of what a run was asked (`config.resolved`) and the Python API's run keys use it.
pub fn resolve_params(name: &str, given: &Value) -> Result<Value, ConfigError> {
    Ok(parse(name, given)?.to_value())
}

/// Builds a scheme by name from a JSON object of parameters (absent ones take their defaults).
pub fn build(name: &str, params: &Value, geometry: &Geometry) -> Result<Built, ConfigError> {
    let s = scheme(name)?;
    (s.build)(&(s.parse)(s, params)?, geometry)
}

/// Parses a scheme's parameters, complete over `defaults`. An unknown key, a wrong type or a value that
/// does not parse is an [`Invalid`] naming the key and the value given; a known key's suggestion is its
/// default.
fn parse_params<P: DeserializeOwned>(
    scheme: &str,
    params: &Value,
    defaults: &Value,
) -> Result<P, ConfigError> {
    serde_path_to_error::deserialize(params).map_err(|e| {
        let accepted = defaults
            .as_object()
            .map(|m| m.keys().cloned().collect::<Vec<_>>().join(", "))
            .unwrap_or_default();
        let key = e.path().to_string();
        let problem = if key == "." {
            Invalid::new(
                "params",
                params,
                format!("must be an object of the scheme's parameters ({accepted})"),
                None,
            )
        } else {
            let given = key
                .split('.')
                .try_fold(params, |v, part| v.get(part))
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .unwrap_or_default();
            match defaults.get(&key) {
                None => Invalid::new(
                    crate::text::clip(&key),
                    crate::text::clip(&given),
                    format!("is not a parameter of this scheme; its parameters are: {accepted}"),
                    None,
                ),
                Some(default) => Invalid::new(
                    &key,
                    given,
                    // A value of the wrong kind in words; else serde's message.
                    crate::text::wrong_kind(&e.inner().to_string())
                        .unwrap_or_else(|| format!("does not parse: {}", e.inner())),
                    Some(match default {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .filter(|s| s != "null"),
                ),
            }
        };
        ConfigError::Invalid {
            within: Some(format!("scheme `{scheme}`")),
            problems: vec![problem],
        }
    })
}

/// A variant's parameters: the given ones over the variant's own defaults (`ofast` is `fast` with
/// `lazy_merge` on unless told otherwise).
pub fn with_defaults(defaults: Value, given: &Value) -> Value {
    match (defaults, given) {
        (Value::Object(mut merged), Value::Object(given)) => {
            merged.extend(given.clone());
            Value::Object(merged)
        }
        (defaults, Value::Null) => defaults,
        (_, given) => given.clone(),
    }
}

/// The defaults of a params type as JSON, for the registry.
pub fn defaults_of<P: Serialize + Default>() -> Value {
    serde_json::to_value(P::default()).unwrap_or(Value::Null)
}

/// Bytes needed to store a number below `n` (a physical page or block address) in a table entry.
pub fn address_bytes(n: u64) -> u64 {
    let bits = 64 - n.saturating_sub(1).leading_zeros() as u64;
    bits.div_ceil(8).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_schemes_list_the_valid_ones() {
        let msg = scheme("fsat").err().unwrap().to_string();
        assert!(
            msg.contains("fsat") && msg.contains("page") && msg.contains("block"),
            "{msg}"
        );
    }

    #[test]
    fn address_widths() {
        assert_eq!(address_bytes(65_536 * 128), 3);
        assert_eq!(address_bytes(256), 1);
        assert_eq!(address_bytes(257), 2);
        assert_eq!(address_bytes(1 << 32), 4);
    }
}
