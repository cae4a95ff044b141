#![no_main]
// Any text: a size, or an error quoting at most ~80 characters of it; never a panic.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = ftlsim_core::config::parse_size(text) {
            assert!(e.to_string().len() < 600, "{e}");
        }
    }
});
