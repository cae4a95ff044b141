//! RAM (the Wear and RAM section): what the scheme's tables need on a controller, structure by structure.

use super::keys::{Component, Keys, Section, Unit};
use crate::ftl::RamItem;

pub(crate) struct Ram<'a>(pub &'a [RamItem]);

const STRUCTURE: &str = "RAM of one structure (ftlsim ram gives its layout)";

impl Component for Ram<'_> {
    fn visit(&self, k: &mut Keys) {
        k.section(Section::WearAndRam).shown(true);
        k.put(
            "ram.total_bytes",
            Unit::Bytes,
            "RAM the scheme's tables need on a controller",
            self.0.iter().map(|i| i.bytes).sum::<u64>(),
        );
        k.shown(false);
        if k.schema() {
            k.put("ram.<structure>", Unit::Bytes, STRUCTURE, 0);
        }
        for item in self.0 {
            k.put(
                format!("ram.{}", item.name),
                Unit::Bytes,
                STRUCTURE,
                item.bytes,
            );
        }
    }
}
