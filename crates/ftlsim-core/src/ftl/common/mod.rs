//! Mechanisms several schemes share: free-block pools, victim selection, LRU lists, the block map and log
//! blocks of the log-block schemes and their merges.

pub mod data_blocks;
pub mod free_pool;
pub mod log_blocks;
pub mod merge;
pub mod seq_logs;
pub mod valid_buckets;
