//! Mechanisms several schemes share: free-block pools, victim selection, LRU lists, the block map and log
//! blocks of the log-block schemes and their merges, map blocks for mapping kept on flash.

pub mod age_order;
pub mod bitmap;
pub mod boot_scan;
pub mod bounds;
pub mod data_blocks;
pub mod free_pool;
pub mod location_cache;
pub mod log_blocks;
pub mod logblock_ram;
pub mod lru;
pub mod map_area;
pub mod merge;
pub mod page_store;
pub mod profiles;
pub mod seq_logs;
pub mod slot_list;
pub mod valid_buckets;
pub mod zone_map;
