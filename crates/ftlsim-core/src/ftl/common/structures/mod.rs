//! Data structures the schemes' mechanisms are built from: bitmaps, intrusive lists, LRU and age orders, valid-page buckets.

pub mod age_order;
pub mod bitmap;
pub mod lru;
pub mod slot_list;
pub mod valid_buckets;
