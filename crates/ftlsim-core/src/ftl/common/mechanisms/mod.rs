//! FTL mechanisms several schemes share: free pools, the block map and log blocks with their merges, the page store, map blocks, boot scans.

pub mod boot_scan;
pub mod data_blocks;
pub mod free_pool;
pub mod location_cache;
pub mod log_blocks;
pub mod map_area;
pub mod merge;
pub mod page_store;
pub mod seq_logs;
pub mod zone_map;
