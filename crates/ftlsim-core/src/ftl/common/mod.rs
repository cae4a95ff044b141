//! Mechanisms several schemes share: free-block pools, victim selection, LRU lists.

pub mod free_pool;
pub mod location_cache;
pub mod valid_buckets;
