//! Latency of host requests: exact count, mean and max, and percentiles from an HDR histogram.

use crate::report::LatencySummary;
use crate::stats::{nearest_ns, time_histogram, to_3_figures};
use hdrhistogram::Histogram;

/// Latencies of one kind of request: exact count, mean and max, and percentiles from a histogram in
/// nanoseconds with 3 significant figures (up to an hour; longer ones saturate).
pub(super) struct Latencies {
    hist: Histogram<u64>,
    /// The latest latency in nanoseconds and how many requests in a row have had it, not yet in `hist`: most
    /// requests of a run take the same time (a page program), and a count in a row costs less than a
    /// histogram record each.
    same_ns: u64,
    same: u64,
    sum_us: f64,
    max_us: f64,
}

impl Latencies {
    pub(super) fn new() -> Latencies {
        Latencies {
            hist: time_histogram(),
            same_ns: 0,
            same: 0,
            sum_us: 0.0,
            max_us: 0.0,
        }
    }

    #[inline]
    pub(super) fn record(&mut self, us: f64) {
        let ns = nearest_ns(us);
        if ns == self.same_ns {
            self.same += 1;
        } else {
            if self.same > 0 {
                self.hist.saturating_record_n(self.same_ns, self.same);
            }
            (self.same_ns, self.same) = (ns, 1);
        }
        self.sum_us += us;
        self.max_us = self.max_us.max(us);
    }

    pub(super) fn summary(&self) -> LatencySummary {
        let mut hist = self.hist.clone();
        hist.saturating_record_n(self.same_ns, self.same);
        let hist = &hist;
        let n = hist.len();
        // The histogram keeps 3 significant figures, so a percentile is reported to 3 (a bucket edge would
        // show 200 us as 200.063), and never above the exact maximum.
        let quantile =
            |q: f64| to_3_figures(hist.value_at_quantile(q) as f64 / 1000.0).min(self.max_us);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Latencies in a row counted together give the histogram that one record each gives: every count,
    /// percentile and the sum, with runs of equal values, a zero, and one past the histogram's hour.
    #[test]
    fn equal_latencies_in_a_row_count_as_records_each() {
        let mut values = vec![0.0, 0.0, 200.0, 200.0, 200.0, 1300.5, 200.0];
        values.extend(std::iter::repeat_n(75.25, 40));
        values.extend([4e12, 4e12, 200.0, 9.999, 9.999]);
        let mut latencies = Latencies::new();
        let mut each = time_histogram();
        for &us in &values {
            latencies.record(us);
            each.saturating_record(nearest_ns(us));
        }
        let s = latencies.summary();
        assert_eq!(s.count, values.len() as u64);
        assert_eq!(s.max, 4e12);
        assert_eq!(s.sum, values.iter().sum::<f64>());
        let mut counted = latencies.hist.clone();
        counted.saturating_record_n(latencies.same_ns, latencies.same);
        assert_eq!(counted, each);
        // 40 of 52 requests took 75.25 us: the median is theirs, to 3 figures.
        assert_eq!(s.p50, 75.3);
    }
}
