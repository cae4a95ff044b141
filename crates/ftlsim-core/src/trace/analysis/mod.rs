//! What a trace asks of a device (`ftlsim info`) and its write-reference picture.

pub mod info;
pub mod refs;
