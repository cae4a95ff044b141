//! Where a trace's requests land on the device: multi-device layouts and compaction of sparse address spaces.

pub mod compact;
pub mod devices;
