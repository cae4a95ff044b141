#![no_main]
// Every trace reader: the input's first line names the format (`ftlsim_fuzz::read_named_trace`).
libfuzzer_sys::fuzz_target!(|data: &[u8]| ftlsim_fuzz::read_named_trace(data));
