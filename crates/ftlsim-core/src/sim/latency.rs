//! Latency of host requests: exact count, mean and max, and percentiles from an HDR histogram.

use crate::report::LatencySummary;
use hdrhistogram::Histogram;

/// Latencies of one kind of request: exact count, mean and max, and percentiles from a histogram in
/// nanoseconds with 3 significant figures (up to an hour; longer ones saturate).
pub(super) struct Latencies {
    hist: Histogram<u64>,
    sum_us: f64,
    max_us: f64,
}

impl Latencies {
    pub(super) fn new() -> Latencies {
        Latencies {
            hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds"),
            sum_us: 0.0,
            max_us: 0.0,
        }
    }

    pub(super) fn record(&mut self, us: f64) {
        // A latency is never negative, so adding a half and truncating rounds to the nearest nanosecond as
        // `round` does, without its library call in the request loop.
        self.hist.saturating_record((us * 1000.0 + 0.5) as u64);
        self.sum_us += us;
        self.max_us = self.max_us.max(us);
    }

    pub(super) fn summary(&self) -> LatencySummary {
        let n = self.hist.len();
        // The histogram keeps 3 significant figures, so a percentile is reported to 3 (a bucket edge would
        // show 200 us as 200.063), and never above the exact maximum.
        let quantile = |q: f64| {
            round_to_3_figures(self.hist.value_at_quantile(q) as f64 / 1000.0).min(self.max_us)
        };
        LatencySummary {
            count: n,
            mean: if n == 0 { 0.0 } else { self.sum_us / n as f64 },
            p50: quantile(0.5),
            p99: quantile(0.99),
            max: self.max_us,
            sum: self.sum_us,
        }
    }
}

fn round_to_3_figures(v: f64) -> f64 {
    if v <= 0.0 {
        return 0.0;
    }
    let scale = 10f64.powi(2 - v.log10().floor() as i32);
    (v * scale).round() / scale
}
