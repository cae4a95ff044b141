#![no_main]
// Any text as a run configuration (JSON, as the binding and `ftlsim run -c` pass it): it parses and the
// scheme builds (its RAM accounted), or an error names the key, quoting at most a short excerpt; never a
// panic. Devices up to 1 GiB are built, so a parameter that allocates beyond what the device needs shows as
// an out-of-memory (libFuzzer's -rss_limit_mb) rather than passing unbuilt.
use ftlsim_core::config::from_json;
use ftlsim_core::sim::{self, resolve_device, SimConfig};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let cfg: SimConfig = match from_json("run configuration", text) {
        Ok(cfg) => cfg,
        Err(e) => {
            let message = e.to_string();
            assert!(message.len() < 2_000, "an overlong error: {} bytes", message.len());
            return;
        }
    };
    let Ok(dev) = resolve_device(&cfg, None) else { return };
    if dev.geometry.logical_bytes() <= 1 << 30 {
        if let Err(e) = sim::ram(&cfg) {
            assert!(e.to_string().len() < 2_000, "an overlong error: {e}");
        }
    }
});
