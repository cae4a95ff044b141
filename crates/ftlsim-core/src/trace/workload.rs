//! Built-in synthetic workloads, usable wherever a trace path is: `name:key=value,...`. Deterministic by seed
//! (PCG64). Each spreads over the device's logical capacity.

use super::{RequestSource, TraceError};
use crate::request::{Op, Request};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::Serialize;

/// A row of the workload registry: name, summary, and each parameter with its default and meaning.
#[derive(Debug, Serialize)]
pub struct WorkloadInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub params: &'static [(&'static str, &'static str, &'static str)],
}

pub static WORKLOADS: &[WorkloadInfo] = &[
    WorkloadInfo {
        name: "uniform",
        summary: "uniform random requests over the logical space (FAST paper section 4, pattern E)",
        params: &[
            ("writes", "150000", "number of requests"),
            ("seed", "1", "random seed"),
            ("pages", "1", "pages per request"),
            ("read_share", "0", "fraction of requests that are reads"),
        ],
    },
    WorkloadInfo {
        name: "sequential",
        summary: "sequential writes from offset 0, wrapping at the end of the logical space",
        params: &[
            ("writes", "0", "number of requests (0: one pass over the logical space)"),
            ("seed", "1", "random seed (unused; accepted for uniformity)"),
            ("pages", "32", "pages per request"),
        ],
    },
    WorkloadInfo {
        name: "hotcold",
        summary: "single-page writes where hot_share of them hit the first hot_fraction of the space, mixed with sequential runs",
        params: &[
            ("writes", "150000", "number of page writes"),
            ("seed", "1", "random seed"),
            ("hot_fraction", "0.2", "share of the logical space that is hot"),
            ("hot_share", "0.8", "share of random writes that go to the hot space"),
            ("sequential_share", "0", "share of writes issued as sequential runs"),
            ("run_pages", "32", "pages per sequential run"),
            ("run_as_request", "false", "issue each sequential run as one multi-page request (writes then counts requests)"),
            ("idle_every", "0", "every this many requests the clock jumps by idle_gap_us (0: no gaps, all times 0)"),
            ("idle_gap_us", "200000", "length of an idle gap in microseconds"),
        ],
    },
];

/// A parsed `name:k=v,...` spec.
#[derive(Clone, Debug)]
pub struct WorkloadSpec {
    pub spec: String,
    pub info: &'static WorkloadInfo,
    values: Vec<(String, String)>,
}

/// Parses a workload spec; `Ok(None)` when `spec` does not name a built-in workload (it is then a path).
pub fn parse_spec(spec: &str) -> Result<Option<WorkloadSpec>, TraceError> {
    let (name, rest) = spec.split_once(':').unwrap_or((spec, ""));
    let Some(info) = WORKLOADS.iter().find(|w| w.name == name) else {
        return Ok(None);
    };
    if std::path::Path::new(spec).exists() {
        return Ok(None);
    }
    let err = |what: String| TraceError::Workload {
        spec: spec.to_string(),
        what,
    };
    let mut values = Vec::new();
    for pair in rest.split(',').filter(|p| !p.trim().is_empty()) {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| err(format!("`{pair}` is not key=value")))?;
        let k = k.trim();
        if !info.params.iter().any(|(p, _, _)| *p == k) {
            let valid: Vec<_> = info.params.iter().map(|(p, _, _)| *p).collect();
            return Err(err(format!(
                "unknown parameter `{k}`; {} takes {}",
                info.name,
                valid.join(", ")
            )));
        }
        values.push((k.to_string(), v.trim().to_string()));
    }
    Ok(Some(WorkloadSpec {
        spec: spec.to_string(),
        info,
        values,
    }))
}

impl WorkloadSpec {
    fn raw(&self, key: &str) -> &str {
        self.values
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .or_else(|| {
                self.info
                    .params
                    .iter()
                    .find(|(p, _, _)| *p == key)
                    .map(|(_, d, _)| *d)
            })
            .expect("parameter is in the registry")
    }

    fn get<T: std::str::FromStr>(&self, key: &str) -> Result<T, TraceError> {
        self.raw(key).parse().map_err(|_| TraceError::Workload {
            spec: self.spec.clone(),
            what: format!(
                "{key}=`{}` is not a valid {}",
                self.raw(key),
                std::any::type_name::<T>()
            ),
        })
    }

    fn fraction(&self, key: &str) -> Result<f64, TraceError> {
        let v: f64 = self.get(key)?;
        if (0.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            Err(TraceError::Workload {
                spec: self.spec.clone(),
                what: format!("{key}={v} must be between 0 and 1"),
            })
        }
    }

    pub fn seed(&self) -> u64 {
        self.get("seed").unwrap_or(1)
    }

    /// A generator over a device of `logical_bytes` with pages of `page_bytes`.
    pub fn build(&self, logical_bytes: u64, page_bytes: u32) -> Result<Generator, TraceError> {
        let page = page_bytes as u64;
        let logical_pages = logical_bytes / page;
        let seed: u64 = self.get("seed")?;
        let kind = match self.info.name {
            "uniform" => Kind::Uniform {
                pages: self.get::<u64>("pages")?.clamp(1, logical_pages),
                read_share: self.fraction("read_share")?,
            },
            "sequential" => Kind::Sequential {
                pages: self.get::<u64>("pages")?.clamp(1, logical_pages),
                next: 0,
            },
            "hotcold" => Kind::HotCold {
                hot_pages: ((logical_pages as f64 * self.fraction("hot_fraction")?) as u64).max(1),
                hot_share: self.fraction("hot_share")?,
                sequential_share: self.fraction("sequential_share")?,
                run_pages: self.get::<u64>("run_pages")?.clamp(1, logical_pages),
                run_left: 0,
                run_next: 0,
                run_as_request: self.get("run_as_request")?,
            },
            other => unreachable!("workload {other} is registered but not built"),
        };
        let mut total: u64 = self.get("writes")?;
        if let Kind::Sequential { pages, .. } = kind {
            if total == 0 {
                total = logical_pages.div_ceil(pages);
            }
        }
        let idle_every = if self.info.name == "hotcold" {
            self.get::<u64>("idle_every")?
        } else {
            0
        };
        let idle_gap_us = if idle_every > 0 {
            self.get::<f64>("idle_gap_us")?
        } else {
            0.0
        };
        Ok(Generator {
            kind,
            idle_every,
            idle_gap_us,
            rng: Pcg64::seed_from_u64(seed),
            page,
            logical_pages,
            total,
            done: 0,
        })
    }
}

enum Kind {
    Uniform {
        pages: u64,
        read_share: f64,
    },
    Sequential {
        pages: u64,
        next: u64,
    },
    HotCold {
        hot_pages: u64,
        hot_share: f64,
        sequential_share: f64,
        run_pages: u64,
        run_left: u64,
        run_next: u64,
        run_as_request: bool,
    },
}

pub struct Generator {
    kind: Kind,
    idle_every: u64,
    idle_gap_us: f64,
    rng: Pcg64,
    page: u64,
    logical_pages: u64,
    total: u64,
    done: u64,
}

impl RequestSource for Generator {
    fn next_request(&mut self) -> Option<Result<Request, TraceError>> {
        if self.done == self.total {
            return None;
        }
        self.done += 1;
        let n = self.logical_pages;
        let (op, first, pages) = match &mut self.kind {
            Kind::Uniform { pages, read_share } => {
                let op = if *read_share > 0.0 && self.rng.gen_bool(*read_share) {
                    Op::Read
                } else {
                    Op::Write
                };
                (op, self.rng.gen_range(0..=n - *pages), *pages)
            }
            Kind::Sequential { pages, next } => {
                if *next + *pages > n {
                    *next = 0;
                }
                let first = *next;
                *next += *pages;
                (Op::Write, first, *pages)
            }
            Kind::HotCold {
                hot_pages,
                hot_share,
                sequential_share,
                run_pages,
                run_left,
                run_next,
                run_as_request,
            } => {
                if *run_left == 0 && *sequential_share > 0.0 && self.rng.gen_bool(*sequential_share)
                {
                    *run_left = *run_pages;
                    *run_next = self.rng.gen_range(0..=(n - *run_pages) / *run_pages) * *run_pages;
                }
                if *run_left > 0 && *run_as_request {
                    *run_left = 0;
                    (Op::Write, *run_next, *run_pages)
                } else if *run_left > 0 {
                    *run_left -= 1;
                    *run_next += 1;
                    (Op::Write, *run_next - 1, 1)
                } else if self.rng.gen_bool(*hot_share) {
                    (Op::Write, self.rng.gen_range(0..*hot_pages), 1)
                } else {
                    (Op::Write, self.rng.gen_range(0..n), 1)
                }
            }
        };
        // Request i (0-based) is at (i / idle_every) gaps: a gap opens before every idle_every-th request.
        let time_us = if self.idle_every > 0 {
            ((self.done - 1) / self.idle_every) as f64 * self.idle_gap_us
        } else {
            0.0
        };
        Some(Ok(Request::new(
            time_us,
            op,
            first * self.page,
            pages * self.page,
        )))
    }

    fn progress(&self) -> (u64, u64) {
        (self.done, self.total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(spec: &str) -> Vec<Request> {
        let mut g = parse_spec(spec)
            .unwrap()
            .unwrap()
            .build(1 << 20, 512)
            .unwrap();
        std::iter::from_fn(|| g.next_request())
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn same_seed_same_requests_other_seed_other_requests() {
        let a = drain("uniform:writes=1000,seed=7");
        assert_eq!(a.len(), 1000);
        assert_eq!(a, drain("uniform:writes=1000,seed=7"));
        assert_ne!(a, drain("uniform:writes=1000,seed=8"));
        assert!(a
            .iter()
            .all(|r| r.op == Op::Write && r.len == 512 && r.offset + r.len <= 1 << 20));
    }

    #[test]
    fn sequential_covers_the_space_once_by_default() {
        let r = drain("sequential:pages=8");
        assert_eq!(r.len(), 2048 / 8);
        assert!(r.windows(2).all(|w| w[1].offset == w[0].offset + 8 * 512));
    }

    #[test]
    fn hotcold_sends_the_hot_share_to_the_hot_space() {
        let r = drain("hotcold:writes=20000,hot_fraction=0.1,hot_share=0.9");
        let hot = r.iter().filter(|q| q.offset < (204 * 512)).count() as f64 / r.len() as f64;
        // 0.9 of writes aimed at the hot tenth, plus a tenth of the uniform rest.
        assert!((hot - 0.91).abs() < 0.02, "{hot}");
    }

    #[test]
    fn hotcold_runs_as_requests_and_idle_gaps() {
        // Every write a run (sequential_share=1): each request is one aligned run of 8 pages.
        let r = drain("hotcold:writes=50,sequential_share=1,run_pages=8,run_as_request=true");
        assert_eq!(r.len(), 50);
        assert!(r
            .iter()
            .all(|q| q.len == 8 * 512 && q.offset % (8 * 512) == 0));
        // Without run_as_request the same runs come page by page, and the defaults keep times at 0.
        let pages = drain("hotcold:writes=16,sequential_share=1,run_pages=8");
        assert!(pages.iter().all(|q| q.len == 512 && q.time_us == 0.0));
        assert_eq!(pages[1].offset, pages[0].offset + 512);
        // idle_every=3, gap 1000: requests 0-2 at 0, 3-5 at 1000, 6 at 2000.
        let t: Vec<f64> = drain("hotcold:writes=7,idle_every=3,idle_gap_us=1000")
            .iter()
            .map(|q| q.time_us)
            .collect();
        assert_eq!(t, vec![0.0, 0.0, 0.0, 1000.0, 1000.0, 1000.0, 2000.0]);
        // The defaults are unchanged by the new parameters.
        assert_eq!(
            drain("hotcold:writes=500,sequential_share=0.3"),
            drain("hotcold:writes=500,sequential_share=0.3,run_as_request=false,idle_every=0")
        );
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = parse_spec("uniform:writes=10,sede=3")
            .unwrap_err()
            .to_string();
        assert!(e.contains("sede") && e.contains("seed"), "{e}");
        let e = parse_spec("hotcold:hot_share=1.5")
            .unwrap()
            .unwrap()
            .build(1 << 20, 512)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("hot_share=1.5"), "{e}");
        assert!(parse_spec("some/file.csv").unwrap().is_none());
    }
}
