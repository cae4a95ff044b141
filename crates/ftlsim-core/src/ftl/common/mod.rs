//! Mechanisms several schemes share: free-block pools, victim selection, LRU lists, the block map and log
//! blocks of the log-block schemes and their merges, map blocks for mapping kept on flash.

pub mod bounds;
pub mod logblock_ram;
pub mod mechanisms;
pub mod profiles;
pub mod structures;
