//! Mechanisms several schemes share: free-block pools, victim selection, LRU lists, map blocks.

pub mod free_pool;
pub mod logblock_ram;
pub mod lru;
pub mod map_area;
pub mod valid_buckets;
