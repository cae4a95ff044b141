//! A pool of erased blocks, handed out in FIFO order so that wear spreads over the pool.

use crate::addr::Pbn;
use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct FreePool {
    blocks: VecDeque<Pbn>,
}

impl FreePool {
    /// A pool holding blocks `first..first + count`.
    pub fn with_range(first: u32, count: u32) -> FreePool {
        FreePool {
            blocks: (first..first + count).map(Pbn).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    pub fn take(&mut self) -> Option<Pbn> {
        self.blocks.pop_front()
    }

    /// Gives back a block the caller has just erased.
    pub fn put(&mut self, pbn: Pbn) {
        self.blocks.push_back(pbn);
    }
}
