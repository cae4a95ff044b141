//! Built-in workloads, usable wherever a trace path is: synthetic patterns and a FAT file-system model.

pub mod fat;
pub mod workload;
