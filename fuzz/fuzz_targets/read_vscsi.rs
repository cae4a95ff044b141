#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| ftlsim_fuzz::read_trace("vscsi", data));
