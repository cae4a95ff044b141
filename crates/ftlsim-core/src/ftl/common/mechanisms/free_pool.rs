//! A pool of erased blocks. Blocks never used yet are handed out first, in address order, without being
//! listed (a 178 GiB trace volume has millions of them); blocks given back are reused in FIFO order, so that
//! wear spreads over the pool.

use crate::addr::Pbn;
use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct FreePool {
    /// Physical block numbers `next_fresh..end_fresh` are fresh.
    next_fresh: u32,
    end_fresh: u32,
    recycled: VecDeque<Pbn>,
}

impl FreePool {
    /// A pool holding blocks `first..first + count`.
    pub fn with_range(first: Pbn, count: u32) -> FreePool {
        FreePool {
            next_fresh: first.0,
            end_fresh: first.0 + count,
            recycled: VecDeque::new(),
        }
    }

    pub fn len(&self) -> usize {
        (self.end_fresh - self.next_fresh) as usize + self.recycled.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn take(&mut self) -> Option<Pbn> {
        if self.next_fresh < self.end_fresh {
            self.next_fresh += 1;
            return Some(Pbn(self.next_fresh - 1));
        }
        self.recycled.pop_front()
    }

    /// Gives back a block the caller has just erased.
    pub fn put(&mut self, pbn: Pbn) {
        self.recycled.push_back(pbn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_blocks_first_then_recycled_in_fifo_order() {
        let mut pool = FreePool::with_range(Pbn(10), 2);
        assert_eq!(pool.len(), 2);
        assert_eq!(pool.take(), Some(Pbn(10)));
        pool.put(Pbn(3));
        pool.put(Pbn(4));
        assert_eq!(
            (pool.take(), pool.take(), pool.take(), pool.take()),
            (Some(Pbn(11)), Some(Pbn(3)), Some(Pbn(4)), None)
        );
        assert!(pool.is_empty());
    }
}
