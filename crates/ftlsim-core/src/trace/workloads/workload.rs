//! Built-in synthetic workloads, usable wherever a trace path is: `name:key=value,...`. Deterministic by seed
//! (PCG64). Each spreads over the device's logical capacity.

use crate::request::{Op, Request};
use crate::text::parse_size;
use crate::trace::workloads::fat::{self, Align, Allocation, App, FatFs, Layout};
use crate::trace::{RequestSource, TraceError};
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
    WorkloadInfo {
        name: "fat-camera",
        summary: "Camera-MS500 on a FAT volume (003 section 4.3): photos written in 512 B units with a synchronously updated photo index; requests tagged data / metadata",
        params: &[
            ("seed", "1", "random seed"),
            ("transactions", "10", "transactions; each creates `photos` photos and deletes half of them"),
            ("photos", "20", "photos created per transaction"),
            ("min_kb", "300", "smallest photo, KB (1000 bytes)"),
            ("max_kb", "500", "largest photo, KB (1000 bytes)"),
            ("max_photos", "60", "past this many photos, all are deleted"),
            ("record_bytes", "96", "photo index record per photo"),
            ("unit", "512", "bytes per application write call"),
            FAT_SYNC, FAT_FLUSH, FAT_VOLUME, FAT_TYPE, FAT_CLUSTER, FAT_ALIGN, FAT_ALLOCATION,
        ],
    },
    WorkloadInfo {
        name: "fat-postmark",
        summary: "PostMark 1.5 on a FAT volume as configured in 003 section 4.3: 10 directories, 500 files of 512 B-32 KB, 10,000 create-or-delete + append-or-read transactions; tagged",
        params: &[
            ("seed", "1", "random seed"),
            ("dirs", "10", "directories"),
            ("files", "500", "initial files"),
            ("min_bytes", "512", "smallest file"),
            ("max_bytes", "32768", "largest file (appends stop there)"),
            ("transactions", "10000", "transactions"),
            ("unit", "512", "bytes per application write call"),
            FAT_SYNC, FAT_FLUSH, FAT_VOLUME, FAT_TYPE, FAT_CLUSTER, FAT_ALIGN, FAT_ALLOCATION,
        ],
    },
    WorkloadInfo {
        name: "fat-copydelete",
        summary: "repeated copy of files of a mean size onto a FAT32 volume, the oldest deleted to make room (004 section VI: PIC 1.9 MB, MP3 4.4 MB, MOV 681 MB); tagged",
        params: &[
            ("seed", "1", "random seed"),
            ("file_mb", "4.4", "mean file size, MB (10^6 bytes); sizes spread +-10%"),
            ("copies", "30", "files copied"),
            ("unit", "65536", "bytes per write call"),
            ("sync", "false", "true: metadata written at every write call; false: every flush_every operations"),
            FAT_FLUSH, FAT_VOLUME,
            ("fat", "32", "FAT type: 12, 16, 32 or 0 (by volume size, fatgen103)"),
            FAT_CLUSTER, FAT_ALIGN, FAT_ALLOCATION,
        ],
    },
];

const FAT_SYNC: (&str, &str, &str) = (
    "sync",
    "true",
    "true: each write call reaches the device with its metadata (003's high-integrity mode); false: metadata written back every flush_every operations",
);
const FAT_FLUSH: (&str, &str, &str) = (
    "flush_every",
    "64",
    "sync=false: file operations between metadata write-backs",
);
const FAT_VOLUME: (&str, &str, &str) = (
    "volume",
    "0",
    "FAT volume size, e.g. 32MiB (0: the whole logical capacity)",
);
const FAT_TYPE: (&str, &str, &str) = (
    "fat",
    "0",
    "FAT type: 12, 16, 32 or 0 (by volume size, fatgen103: FAT16 below 512 MiB, FAT32 from it)",
);
const FAT_CLUSTER: (&str, &str, &str) = (
    "cluster",
    "0",
    "cluster bytes (0: fatgen103's default for the volume size)",
);

const FAT_ALIGN: (&str, &str, &str) = (
    "align",
    "spec",
    "where the data region starts in an erase block: spec (fatgen103's layout as it falls), block (block-aligned) or a sector offset",
);
const FAT_ALLOCATION: (&str, &str, &str) = (
    "allocation",
    "first-free",
    "cluster allocation: first-free (lowest free cluster) or next-free (after the last allocated, wrapping)",
);

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
                "{key}=`{}` is not {}",
                self.raw(key),
                crate::text::value_kind(std::any::type_name::<T>())
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

    fn err(&self, what: String) -> TraceError {
        TraceError::Workload {
            spec: self.spec.clone(),
            what,
        }
    }

    /// The FAT file system of a `fat-*` workload and its application.
    fn fat(&self, logical_bytes: u64, block_bytes: u64) -> Result<Kind, TraceError> {
        let volume = match self.raw("volume") {
            "0" => logical_bytes,
            text => parse_size(text).map_err(|e| self.err(e.to_string()))?,
        };
        if volume > logical_bytes {
            return Err(self.err(format!(
                "volume={volume} bytes is larger than the device's logical capacity ({logical_bytes} bytes); pass a larger capacity"
            )));
        }
        let fat: u32 = self.get("fat")?;
        let cluster: u32 = self.get("cluster")?;
        let layout = Layout::new(
            volume,
            (fat != 0).then_some(fat),
            (cluster != 0).then_some(cluster),
        )
        .and_then(|l| {
            let align = Align::parse(self.raw("align"))?;
            if align != Align::Spec && block_bytes == 0 {
                return Err(format!(
                    "align={} needs the device's erase block size, known only inside a simulation; \
                     pass align=spec here",
                    self.raw("align")
                ));
            }
            l.aligned(align, block_bytes / fat::SECTOR)
        })
        .map_err(|e| self.err(e))?;
        let allocation = Allocation::parse(self.raw("allocation")).map_err(|e| self.err(e))?;
        let mut fs = FatFs::new(layout, self.get("sync")?, self.get("flush_every")?)
            .with_allocation(allocation);
        let unit = self.get::<u64>("unit")?.max(1);
        let mut rng = Pcg64::seed_from_u64(self.seed());
        let (app, steps) = match self.info.name {
            "fat-camera" => {
                let (min, max) = (
                    self.get::<u64>("min_kb")? * 1000,
                    self.get::<u64>("max_kb")? * 1000,
                );
                if min > max {
                    return Err(self.err(format!("min_kb ({min}) must not exceed max_kb ({max})")));
                }
                let transactions: u32 = self.get("transactions")?;
                let photos: u32 = self.get("photos")?;
                let app = App::Camera {
                    transactions,
                    photos,
                    min_bytes: min,
                    max_bytes: max,
                    max_photos: self.get("max_photos")?,
                    record_bytes: self.get::<u64>("record_bytes")?.max(1),
                    unit,
                    index: None,
                    live: Vec::new(),
                    made: Vec::new(),
                    transaction: 0,
                    step: 0,
                };
                (app, 1 + transactions as u64 * (photos as u64 + 1))
            }
            "fat-postmark" => {
                let (min, max) = (self.get::<u64>("min_bytes")?, self.get::<u64>("max_bytes")?);
                if min == 0 || min > max {
                    return Err(self.err(format!(
                        "min_bytes ({min}) must be at least 1 and at most max_bytes ({max})"
                    )));
                }
                let dirs = (0..self.get::<u32>("dirs")?.max(1))
                    .map(|_| fs.mkdir(fat::ROOT))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| self.err(e))?;
                let initial: u32 = self.get("files")?;
                let transactions: u32 = self.get("transactions")?;
                let app = App::PostMark {
                    dirs,
                    initial,
                    min_bytes: min,
                    max_bytes: max,
                    transactions,
                    unit,
                    live: Vec::new(),
                    created: 0,
                    done: 0,
                };
                (app, initial as u64 + transactions as u64)
            }
            "fat-copydelete" => {
                let mb: f64 = self.get("file_mb")?;
                if !(mb.is_finite() && mb > 0.0) {
                    return Err(self.err(format!("file_mb={mb} must be more than 0")));
                }
                let copies: u32 = self.get("copies")?;
                let app = App::CopyDelete {
                    mean_bytes: (mb * 1e6) as u64,
                    copies,
                    unit,
                    live: Default::default(),
                    done: 0,
                };
                (app, copies as u64)
            }
            other => unreachable!("fat workload {other} is registered but not built"),
        };
        // Keep the random stream of the application independent of the setup above.
        rng = Pcg64::seed_from_u64(rng.gen());
        Ok(Kind::Fat(Box::new(FatRun {
            fs,
            app,
            rng,
            steps,
            done: 0,
            finished: false,
        })))
    }

    /// A generator over a device of `logical_bytes` with pages of `page_bytes` (erase block size unknown).
    pub fn build(&self, logical_bytes: u64, page_bytes: u32) -> Result<Generator, TraceError> {
        self.build_on(logical_bytes, page_bytes, 0)
    }

    /// Like [`Self::build`] on a device whose erase blocks hold `block_bytes` (0: unknown), which FAT
    /// workloads need for `align=block` or a sector offset.
    pub fn build_on(
        &self,
        logical_bytes: u64,
        page_bytes: u32,
        block_bytes: u64,
    ) -> Result<Generator, TraceError> {
        let page = page_bytes as u64;
        let logical_pages = logical_bytes / page;
        let seed: u64 = self.get("seed")?;
        if self.info.name.starts_with("fat-") {
            return Ok(Generator {
                kind: self.fat(logical_bytes, block_bytes)?,
                rng: Pcg64::seed_from_u64(seed),
                page,
                logical_pages,
                total: 0,
                done: 0,
                idle_every: 0,
                idle_gap_us: 0.0,
            });
        }
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

/// A FAT file system driven by an application, step by step.
struct FatRun {
    fs: FatFs,
    app: App,
    rng: Pcg64,
    steps: u64,
    done: u64,
    finished: bool,
}

impl FatRun {
    fn next_request(&mut self) -> Option<Result<Request, String>> {
        loop {
            if let Some(r) = self.fs.out.pop_front() {
                return Some(Ok(r));
            }
            if self.finished {
                return None;
            }
            match self.app.step(&mut self.fs, &mut self.rng) {
                Ok(true) => self.done += 1,
                Ok(false) => {
                    self.fs.write_back();
                    self.finished = true;
                }
                Err(e) => {
                    self.finished = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

enum Kind {
    Fat(Box<FatRun>),
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
        if let Kind::Fat(run) = &mut self.kind {
            return run.next_request().map(|r| {
                r.map_err(|what| TraceError::Workload {
                    spec: "fat workload".into(),
                    what,
                })
            });
        }
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
            Kind::Fat(_) => unreachable!("served above"),
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
        let time_us = (self.done - 1)
            .checked_div(self.idle_every)
            .map_or(0.0, |gaps| gaps as f64 * self.idle_gap_us);
        Some(Ok(Request::new(
            time_us,
            op,
            first * self.page,
            pages * self.page,
        )))
    }

    fn progress(&self) -> (u64, u64) {
        match &self.kind {
            Kind::Fat(run) => (run.done, run.steps),
            _ => (self.done, self.total),
        }
    }

    /// A workload with idle gaps has times: its first `idle_every` requests arrive together at time 0.
    fn timed(&self) -> bool {
        self.idle_every > 0
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
