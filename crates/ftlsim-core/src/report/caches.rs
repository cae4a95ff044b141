//! The Caches section: hits and misses of each cache a scheme keeps (only those it used).

use super::keys::{num, Component, Keys, Section, Unit};
use crate::stats::CacheKind;

/// (hits, misses) per cache.
pub(crate) struct Caches<'a>(pub &'a [(u64, u64); CacheKind::COUNT]);

impl Component for Caches<'_> {
    fn visit(&self, k: &mut Keys) {
        k.section(Section::Caches).shown(true);
        for kind in CacheKind::ALL {
            let (hits, misses) = self.0[*kind as usize];
            if hits + misses == 0 && !k.schema() {
                continue;
            }
            let name = kind.name();
            k.put(
                format!("cache.{name}.hits"),
                Unit::Count,
                &format!("{name} hits"),
                hits,
            );
            k.put(
                format!("cache.{name}.misses"),
                Unit::Count,
                &format!("{name} misses"),
                misses,
            );
            k.put(
                format!("cache.{name}.miss_ratio"),
                Unit::Ratio,
                &format!("{name} misses per lookup"),
                num(misses as f64 / (hits + misses) as f64),
            );
        }
    }
}
