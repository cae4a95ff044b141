//! Bad blocks (the Wear and RAM section) of a chip that has them (`bad_block_ratio`, `endurance`).

use super::keys::{Component, Keys, Section, Unit};

/// Factory and grown bad blocks and the reserve for them.
#[derive(Clone, Copy, Debug, Default)]
pub struct BadBlockFigures {
    pub factory: u32,
    pub grown: u32,
    pub reserve: u32,
}

/// The bad blocks of a chip that has them; a chip without them has no `bad_blocks.*` keys.
pub(crate) struct BadBlocks(pub Option<BadBlockFigures>);

impl Component for BadBlocks {
    fn visit(&self, k: &mut Keys) {
        let Some(b) = self.0.or(k.schema().then(BadBlockFigures::default)) else {
            return;
        };
        k.section(Section::WearAndRam).shown(true);
        k.put(
            "bad_blocks.factory",
            Unit::Count,
            "blocks bad from the factory (bad_block_ratio), skipped by every scheme",
            b.factory,
        );
        k.put(
            "bad_blocks.grown",
            Unit::Count,
            "blocks that wore out (an erase past endurance failed) and were replaced from the reserve",
            b.grown,
        );
        k.shown(false).put(
            "bad_blocks.reserve",
            Unit::Count,
            "chip blocks set aside to replace bad blocks (bad_block_reserve)",
            b.reserve,
        );
    }
}
