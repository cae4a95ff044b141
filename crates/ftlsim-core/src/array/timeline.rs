//! The event-driven timing of a multi-chip array: when each flash operation starts and ends on its die and
//! its channel, when each host request is submitted and completes, and the figures that follow (response
//! times, throughput, utilization, queue depth). Schemes never see it: the device tells it each operation
//! ([`Timeline::op`]), the run loop tells it where requests begin and end.
//!
//! # Dependency rules (all of them, in one place)
//! 1. An operation starts no earlier than its request's submission (background work: no earlier than the
//!    completion of the last request).
//! 2. A die does one operation at a time, in the order the scheme issued them, so the operations of one
//!    request that touch the same die run in the scheme's order. A channel does one transfer at a time, in
//!    the earliest gap at or after the time the transfer is ready (a transfer does not wait behind one booked
//!    later for a die that is still busy).
//! 3. Read: the die's array time, then the channel's command and transfer (the die holds the data until it
//!    is out). Program: the channel's command and transfer once the die is free, then the die's array time.
//!    Erase: the channel's command, then the die's erase time; the erase of a striped block is one
//!    (multi-plane) erase on every die at once, that of a block placed per die an erase on its die.
//! 4. A program waits for the last read issued before it in the same request: a copy's program after its
//!    read, a mapping page's rewrite after its read, a read-modify-write's program after the read.
//! 5. An erase waits for every operation issued before it in the same request: the copies out of the block
//!    are done before it is erased.
//! 6. A request completes when its last operation ends (and its NVRAM accesses, done one after another from
//!    its submission); a request with no flash work completes when it is submitted.
//! 7. Multi-plane (dies of several planes): a read or program that follows its die's last operation in the
//!    same request (or background work), of the same kind, on another plane of the die and at the same page
//!    offset within its physical block, joins it as one multi-plane operation (MQSim's condition for
//!    combining a die's transactions: distinct planes, identical page address). The array time is spent
//!    once: a multi-plane program's planes move their data over the channel one after another and the array
//!    starts when the last plane's data is in; a multi-plane read's planes share the first's array time and
//!    move their data out one after another. An erase, a spare access on the die, a run of copies or spare
//!    reads, and the end of the request close it. Striped, page `o` of a scheme block is on plane
//!    `(o mod units) div dies` at offset `o div units`; placed per die (a die's planes make its block), on
//!    plane `o mod planes` at offset `o div planes`. Only the scheme's order is kept: the copies of a run
//!    (read, program, read, program, ...) never follow one another on a die and are not joined.
//!
//! Host side: request `i` arrives at its trace time x `time_scale`; one whose time is 0 (a built-in workload,
//! or a trace without times) arrives when the host can submit it, which makes a closed loop. At most
//! `queue_depth` requests are in the device; the others wait in the host, in arrival order, and that wait is
//! part of their response time. Every operation is O(1) (an erase O(dies)) but a transfer fitted into a gap
//! between booked ones (a galloping search and an insert, mostly at the front); a request is
//! O(log queue_depth).

use super::figures::{ArrayFigures, ResponseSummary};
use crate::addr::Ppn;
use crate::config::Timing;
use crate::config::{ArrayPlacement, ArraySpec};
use hdrhistogram::Histogram;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A flash operation as the timeline sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlashOp {
    Read,
    SpareRead,
    Program,
    SpareProgram,
    Erase,
}

/// Where and when an operation ran (kept only when [`Timeline::keep_spans`] asks, for tests).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    pub op: FlashOp,
    pub die: u32,
    pub channel: u32,
    pub start: f64,
    pub end: f64,
}

/// Time of one kind of operation: on the die (array) and on the channel (command + transfer).
#[derive(Clone, Copy, Debug)]
struct Cost {
    array: f64,
    channel: f64,
}

/// A request's kind for its response time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
    Other,
}

impl From<crate::request::Op> for Kind {
    fn from(op: crate::request::Op) -> Kind {
        match op {
            crate::request::Op::Read => Kind::Read,
            crate::request::Op::Write => Kind::Write,
            crate::request::Op::Trim => Kind::Other,
        }
    }
}

/// Response times of one kind of request, in nanoseconds with 3 significant figures.
struct Responses {
    hist: Histogram<u64>,
    sum: f64,
    max: f64,
}

impl Responses {
    fn new() -> Responses {
        Responses {
            hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds"),
            sum: 0.0,
            max: 0.0,
        }
    }

    fn record(&mut self, us: f64) {
        self.hist.saturating_record((us * 1000.0).round() as u64);
        self.sum += us;
        self.max = self.max.max(us);
    }

    fn summary(&self) -> ResponseSummary {
        let n = self.hist.len();
        let at = |q: f64| {
            if n == 0 {
                0.0
            } else {
                (self.hist.value_at_quantile(q) as f64 / 1000.0).min(self.max)
            }
        };
        ResponseSummary {
            count: n,
            mean: if n == 0 { 0.0 } else { self.sum / n as f64 },
            p50: at(0.5),
            p99: at(0.99),
            p99_9: at(0.999),
            max: self.max,
            cdf: if n == 0 {
                Vec::new()
            } else {
                CDF_QUANTILES.iter().map(|&q| (at(q), q)).collect()
            },
        }
    }
}

/// The quantiles the report keeps of each response-time distribution, for CDF plots: every percent, and the
/// tail finer.
const CDF_QUANTILES: [f64; 106] = {
    let mut q = [0.0; 106];
    let mut i = 0;
    while i < 100 {
        q[i] = i as f64 / 100.0;
        i += 1;
    }
    q[100] = 0.995;
    q[101] = 0.999;
    q[102] = 0.9995;
    q[103] = 0.9999;
    q[104] = 0.99999;
    q[105] = 1.0;
    q
};

/// A channel's reserved transfers from now on: (start, end), in order, never overlapping. A transfer takes the
/// earliest gap at or after the time it is ready (back-filling), so it never waits behind a transfer booked
/// later for a die that is still busy. Transfers that end before every future transfer can start are
/// forgotten, so the list holds only those in flight (a few per die); it grows once, never per request.
struct Channel {
    booked: VecDeque<(f64, f64)>,
    /// The ends of the first and of the last booked transfer (infinite and minus infinite when none): the
    /// common case decided without a look into the list.
    first_end: f64,
    last_end: f64,
}

impl Default for Channel {
    fn default() -> Channel {
        Channel {
            booked: VecDeque::new(),
            first_end: f64::INFINITY,
            last_end: f64::NEG_INFINITY,
        }
    }
}

/// A channel's list longer than this is cut to its tighter horizon ([`Timeline::channel_horizon`]) before a
/// transfer is fitted into a gap: the cut costs a look at each of the channel's dies, the insert a move of
/// the transfers booked after the gap.
const LONG_BOOKING: usize = 8;

impl Channel {
    /// Forgets the transfers that end by `past` (no transfer can start before it from now on).
    #[inline]
    fn forget(&mut self, past: f64) {
        if self.first_end > past {
            return;
        }
        while self.booked.front().is_some_and(|&(_, end)| end <= past) {
            self.booked.pop_front();
        }
        self.first_end = self.booked.front().map_or(f64::INFINITY, |&(_, end)| end);
        if self.booked.is_empty() {
            self.last_end = f64::NEG_INFINITY;
        }
    }

    /// Books `len` (more than 0) microseconds after every booked transfer, at `ready`, if none ends after
    /// `ready`: true then, the transfer's start being `ready`. The common case: O(1).
    #[inline]
    fn append(&mut self, ready: f64, len: f64) -> bool {
        if self.last_end > ready {
            return false;
        }
        self.booked.push_back((ready, ready + len));
        self.last_end = ready + len;
        self.first_end = earlier(self.first_end, ready + len);
        true
    }

    /// Books `len` microseconds in the earliest gap at or after `ready` long enough, and returns its start.
    fn fit(&mut self, ready: f64, len: f64) -> f64 {
        let mut i = self.first_ending_after(ready);
        let mut at = ready;
        while i < self.booked.len() {
            let (start, end) = self.booked[i];
            if start >= at + len {
                break;
            }
            at = later(at, end);
            i += 1;
        }
        // Mostly first: a die one behind the others takes the gap before their next transfer.
        if i == 0 {
            self.booked.push_front((at, at + len));
        } else {
            self.booked.insert(i, (at, at + len));
        }
        self.first_end = earlier(self.first_end, at + len);
        self.last_end = later(self.last_end, at + len);
        at
    }

    /// The index of the first booked transfer that ends after `t` (the length if none does). The ends are in
    /// order, and `t` is mostly among the first few (the list starts at the channel's horizon, and a die
    /// whose transfer is not the last is one behind the others): a galloping search from the front,
    /// O(log index).
    #[inline]
    fn first_ending_after(&self, t: f64) -> usize {
        let n = self.booked.len();
        // Every index below `lo` ends by `t`; the answer is at most `hi`.
        let (mut lo, mut step) = (0, 1);
        while lo + step <= n && self.booked[lo + step - 1].1 <= t {
            lo += step;
            step *= 2;
        }
        let mut hi = (lo + step - 1).min(n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.booked[mid].1 <= t {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// The later of two times, which are never NaN: one instruction, where `f64::max` also orders NaN.
#[inline(always)]
fn later(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

/// The earlier of two times, which are never NaN.
#[inline(always)]
fn earlier(a: f64, b: f64) -> f64 {
    if a < b {
        a
    } else {
        b
    }
}

/// A non-negative time as a key that orders as the time does (the bits of a non-negative f64 do).
#[inline]
fn key(t: f64) -> Reverse<u64> {
    Reverse(t.max(0.0).to_bits())
}

#[inline]
fn time(k: Reverse<u64>) -> f64 {
    f64::from_bits(k.0)
}

/// A die's multi-plane operation that the die's next operation may join (rule 7).
#[derive(Clone, Copy)]
struct MultiPlane {
    /// The work ([`Timeline::generation`]) it belongs to; a later work closes it.
    generation: u64,
    op: FlashOp,
    /// The page offset within the physical block that every plane of it has.
    offset: u32,
    /// Its planes, a bit each.
    planes: u64,
    /// When it began (a read: its shared array time, where a joining read's span starts too).
    start: f64,
    /// A read: when the shared array time ended. A program: when the last plane's transfer ended (the array
    /// time starts then).
    at: f64,
    /// Where its first span is (spans are kept only in tests).
    first_span: usize,
}

impl MultiPlane {
    const CLOSED: MultiPlane = MultiPlane {
        generation: 0,
        op: FlashOp::Erase,
        offset: 0,
        planes: 0,
        start: 0.0,
        at: 0.0,
        first_span: 0,
    };
}

/// The most planes a die may have for its planes' operations to join (rule 7): a bit each in a word.
const MAX_JOINED_PLANES: u32 = 64;

/// The sums a run of operations on one die keeps in registers ([`Timeline::copy_run`],
/// [`Timeline::spare_read_run`]): the die's and its channel's busy time, the request's latest end and its
/// last read's end.
struct RunSums {
    die_busy: f64,
    channel_busy: f64,
    frontier: f64,
    read_end: f64,
}

impl RunSums {
    #[inline(always)]
    fn of(t: &Timeline, d: usize, c: usize) -> RunSums {
        RunSums {
            die_busy: t.die_busy[d],
            channel_busy: t.channel_busy[c],
            frontier: t.frontier,
            read_end: t.last_read_end,
        }
    }

    #[inline(always)]
    fn store(self, t: &mut Timeline, d: usize, c: usize) {
        (t.die_busy[d], t.channel_busy[c]) = (self.die_busy, self.channel_busy);
        (t.frontier, t.last_read_end) = (self.frontier, self.read_end);
    }
}

pub struct Timeline {
    spec: ArraySpec,
    dies: u32,
    /// Dies on each channel (1: a channel's transfers never wait for another die's).
    dies_per_channel: u32,
    units: u32,
    /// Pages of the scheme's (striped) block: its page `o` is on unit `o mod units`.
    pages_per_block: u32,
    /// Striped, with dies a power of two that divides the block: `dies - 1`, as page `p`'s die is then
    /// `p mod dies` (the units being dies x planes); else 0.
    die_mask: u32,
    /// Placed per die (`ftl/per_die.rs`): the pages of each die, die `d` holding pages `d x die_pages` to
    /// `(d + 1) x die_pages - 1`; 0: striped.
    die_pages: u32,
    read: Cost,
    spare_read: Cost,
    program: Cost,
    spare_program: Cost,
    erase: Cost,
    die_free: Vec<f64>,
    die_busy: Vec<f64>,
    /// Planes of each die when more than one may join an operation (rule 7), else 1.
    planes: u32,
    /// Per die, the multi-plane operation its last operation opened or joined (empty with one plane).
    multi_plane: Vec<MultiPlane>,
    /// Counts the works (requests, background work) and the runs and erases within them: a multi-plane
    /// operation of an earlier generation is closed.
    generation: u64,
    channels: Vec<Channel>,
    channel_busy: Vec<f64>,
    queue_depth: usize,
    time_scale: f64,
    /// Whether operations are timed now (inside a request or background work).
    open: bool,
    /// The current request's (or background work's) submission, its last read's end, its latest end.
    ready: f64,
    last_read_end: f64,
    frontier: f64,
    /// Serial controller time of the current request (NVRAM accesses).
    controller_us: f64,
    arrival: f64,
    kind: Kind,
    /// Completions of the requests in the device (at most `queue_depth`).
    in_device: BinaryHeap<Reverse<u64>>,
    /// Completions not yet passed by the queue-depth sweep.
    in_system: BinaryHeap<Reverse<u64>>,
    last_arrival: f64,
    last_dispatch: f64,
    last_completion: f64,
    first_arrival: Option<f64>,
    /// The latest time anything ended.
    end: f64,
    /// The sweep of read and write requests in the system over time (a trim takes a place in the device but
    /// is not counted, as it has no response time): how many now, since when, the integral, the most.
    sweep_n: u64,
    sweep_t: f64,
    depth_area: f64,
    depth_max: u64,
    requests: u64,
    bytes: u64,
    reads: Responses,
    writes: Responses,
    spans: Option<Vec<Span>>,
}

impl Timeline {
    /// A timeline for an array of `spec` whose scheme blocks have `pages_per_block` pages (striped over every
    /// plane-unit), with `timing`'s array times, pages of `page_bytes` + `spare_bytes`, at most `queue_depth`
    /// requests in the device and arrivals at trace time x `time_scale`.
    pub fn new(
        spec: ArraySpec,
        timing: &Timing,
        page_bytes: u32,
        spare_bytes: u32,
        pages_per_block: u32,
        queue_depth: u32,
        time_scale: f64,
    ) -> Timeline {
        let command = spec.command_us;
        let page = command + spec.transfer_us(page_bytes);
        let spare = command + spec.transfer_us(spare_bytes);
        let costs = [
            Cost {
                array: timing.read_us,
                channel: page,
            },
            Cost {
                array: timing.spare_read_us,
                channel: spare,
            },
            Cost {
                array: timing.program_us,
                channel: page,
            },
            Cost {
                array: timing.spare_program_us,
                channel: spare,
            },
            Cost {
                array: timing.erase_us,
                channel: command,
            },
        ];
        Timeline::build(
            spec,
            costs,
            pages_per_block,
            queue_depth.max(1) as usize,
            time_scale,
        )
    }

    /// A fresh timeline; `costs`: read, spare read, program, spare program, erase.
    fn build(
        spec: ArraySpec,
        costs: [Cost; 5],
        pages_per_block: u32,
        queue_depth: usize,
        time_scale: f64,
    ) -> Timeline {
        let dies = spec.dies();
        let planes = if spec.planes_per_die <= MAX_JOINED_PLANES {
            spec.planes_per_die
        } else {
            1
        };
        let [read, spare_read, program, spare_program, erase] = costs;
        Timeline {
            spec,
            dies,
            dies_per_channel: dies / spec.channels,
            units: spec.units(),
            pages_per_block,
            die_mask: if dies.is_power_of_two() && pages_per_block.is_multiple_of(dies) {
                dies - 1
            } else {
                0
            },
            die_pages: 0,
            read,
            spare_read,
            program,
            spare_program,
            erase,
            die_free: vec![0.0; dies as usize],
            die_busy: vec![0.0; dies as usize],
            planes,
            multi_plane: if planes > 1 {
                vec![MultiPlane::CLOSED; dies as usize]
            } else {
                Vec::new()
            },
            generation: 1,
            channels: (0..spec.channels).map(|_| Channel::default()).collect(),
            channel_busy: vec![0.0; spec.channels as usize],
            queue_depth,
            time_scale,
            open: false,
            ready: 0.0,
            last_read_end: 0.0,
            frontier: 0.0,
            controller_us: 0.0,
            arrival: 0.0,
            kind: Kind::Other,
            in_device: BinaryHeap::with_capacity(queue_depth + 1),
            in_system: BinaryHeap::with_capacity(queue_depth + 1),
            last_arrival: 0.0,
            last_dispatch: 0.0,
            last_completion: 0.0,
            first_arrival: None,
            end: 0.0,
            sweep_n: 0,
            sweep_t: 0.0,
            depth_area: 0.0,
            depth_max: 0,
            requests: 0,
            bytes: 0,
            reads: Responses::new(),
            writes: Responses::new(),
            spans: None,
        }
    }

    /// Forgets every time and figure (measurement starts now: preconditioning is over, or `measure_from`
    /// is reached); the shape stays.
    pub fn reset(&mut self) {
        let keep = self.spans.is_some();
        let die_pages = self.die_pages;
        let costs = [
            self.read,
            self.spare_read,
            self.program,
            self.spare_program,
            self.erase,
        ];
        *self = Timeline::build(
            self.spec,
            costs,
            self.pages_per_block,
            self.queue_depth,
            self.time_scale,
        );
        self.die_pages = die_pages;
        if keep {
            self.keep_spans();
        }
    }

    /// Places the pages per die rather than striped (`ftl/per_die.rs`): die `d` holds the `pages` pages
    /// from `d x pages` on, and an erase is on the block's die alone.
    pub fn place_per_die(&mut self, pages: u32) {
        self.die_pages = pages.max(1);
    }

    /// Keep every operation's [`Span`] (tests: golden timelines).
    pub fn keep_spans(&mut self) {
        self.spans = Some(Vec::new());
    }

    pub fn spans(&self) -> &[Span] {
        self.spans.as_deref().unwrap_or(&[])
    }

    pub fn spec(&self) -> &ArraySpec {
        &self.spec
    }

    /// Starts timing a host request of `bytes` that arrives at trace time `trace_us` (0: no time, closed
    /// loop). Returns its submission time.
    pub fn begin_request(&mut self, kind: Kind, trace_us: f64, bytes: u64) -> f64 {
        let arrival = if trace_us > 0.0 {
            (trace_us * self.time_scale).max(self.last_arrival)
        } else {
            self.last_dispatch.max(self.last_arrival)
        };
        while self.in_device.peek().is_some_and(|&k| time(k) <= arrival) {
            self.in_device.pop();
        }
        let mut dispatch = arrival.max(self.last_dispatch);
        if self.in_device.len() >= self.queue_depth {
            let first_free = self.in_device.pop().map_or(0.0, time);
            dispatch = dispatch.max(first_free);
        }
        // A request without a time is submitted when it can be: it arrives then.
        let arrival = if trace_us > 0.0 { arrival } else { dispatch };
        self.sweep_to(arrival);
        if kind != Kind::Other {
            self.sweep_n += 1;
            self.depth_max = self.depth_max.max(self.sweep_n);
        }
        self.first_arrival.get_or_insert(arrival);
        self.last_arrival = arrival;
        self.last_dispatch = dispatch;
        self.arrival = arrival;
        self.kind = kind;
        if kind != Kind::Other {
            self.bytes += bytes;
        }
        self.start_work(dispatch);
        dispatch
    }

    /// The current request is done: records its response time and returns it.
    pub fn end_request(&mut self) -> f64 {
        let completion = self.frontier.max(self.ready + self.controller_us);
        self.open = false;
        self.in_device.push(key(completion));
        if self.kind != Kind::Other {
            self.in_system.push(key(completion));
        }
        self.last_completion = self.last_completion.max(completion);
        self.end = self.end.max(completion);
        self.requests += 1;
        let response = completion - self.arrival;
        match self.kind {
            Kind::Read => self.reads.record(response),
            Kind::Write => self.writes.record(response),
            Kind::Other => {}
        }
        response
    }

    /// The current request will not complete (a power cut landed in it): it leaves the system now, and
    /// nothing is timed until the next request or background work (mounting is not timed).
    pub fn abandon(&mut self) {
        if self.open {
            self.open = false;
            let now = self.frontier;
            if self.kind != Kind::Other {
                self.in_system.push(key(now));
            }
            self.end = self.end.max(now);
        }
    }

    /// Starts background work (idle-time garbage collection, the end-of-trace flush): it starts once the
    /// last request has completed.
    pub fn begin_background(&mut self) {
        self.kind = Kind::Other;
        self.start_work(self.last_completion.max(self.last_dispatch));
    }

    /// Background work is done.
    pub fn end_background(&mut self) {
        self.open = false;
        self.end = self.end.max(self.frontier);
    }

    fn start_work(&mut self, at: f64) {
        self.generation += 1;
        self.open = true;
        self.ready = at;
        self.last_read_end = at;
        self.frontier = at;
        self.controller_us = 0.0;
    }

    /// Serial controller time of the current request (an NVRAM access).
    #[inline]
    pub fn controller(&mut self, us: f64) {
        if self.open {
            self.controller_us += us;
        }
    }

    /// The die of page `ppn` of the scheme (its partition's base added).
    #[inline(always)]
    fn die_of(&self, ppn: u32) -> u32 {
        // One die, or a power of two that divides the block: no division in the hot loop.
        if self.dies == 1 {
            return 0;
        }
        // Per die: the die whose pages hold it.
        if let Some(die) = ppn.checked_div(self.die_pages) {
            return die;
        }
        if self.die_mask != 0 {
            ppn & self.die_mask
        } else {
            // Striped: its offset's plane-unit.
            (ppn % self.pages_per_block) % self.units % self.dies
        }
    }

    /// Times a run of copies ([`crate::device::Device::copy_run`]): page `from[i]` read, then programmed to
    /// page `to + i`, for each `i` in order, exactly as [`Timeline::op`] of each would; every page of the
    /// scheme's partition, whose first page is `base`.
    pub fn copy_run(&mut self, from: &[Ppn], to: u32, base: u32) {
        if !self.open {
            return;
        }
        self.generation += 1;
        // One die, or placed per die: every copy of the run is on one die.
        if self.die_pages != 0 || self.dies == 1 {
            let die = self.die_of(base + to);
            debug_assert!(from.iter().all(|p| self.die_of(base + p.0) == die));
            self.copy_run_on(die, from.len());
            return;
        }
        for (i, source) in from.iter().enumerate() {
            let die = self.die_of(base + source.0);
            self.read_on(FlashOp::Read, die, self.read);
            let die = self.die_of(base + to + i as u32);
            self.program_on(FlashOp::Program, die, self.program);
        }
    }

    /// [`Timeline::copy_run`] of `copies` copies all on `die` (one die, or placed per die): what [`Timeline::read_on`]
    /// then [`Timeline::program_on`] of each do, the same sums in the same order, with the die's and the
    /// request's times kept in registers through the run (the hot loop of a merge or a GC run).
    fn copy_run_on(&mut self, die: u32, copies: usize) {
        let (d, c) = (die as usize, self.channel_of(die));
        let program = self.program;
        let mut run = RunSums::of(self, d, c);
        for _ in 0..copies {
            let end = self.read_in_run(FlashOp::Read, d, c, self.read, &mut run);
            // The program waits for its read (rule 4), which ended after the submission, on the same die.
            let start = self.reserve(c, end, program.channel);
            let moved = start + program.channel;
            run.channel_busy += program.channel;
            let free = moved + program.array;
            self.die_free[d] = free;
            run.die_busy += free - start;
            run.frontier = later(run.frontier, free);
            self.span(FlashOp::Program, d, c, start, free);
        }
        run.store(self, d, c);
    }

    /// Times the spare reads of the `pages` consecutive pages from `first` (a merge's reads of a block's
    /// spare areas, with the partition's base added): what [`Timeline::op`] of each does, in order.
    pub fn spare_read_run(&mut self, first: u32, pages: u32) {
        if !self.open {
            return;
        }
        self.generation += 1;
        if self.die_pages != 0 || self.dies == 1 {
            let die = self.die_of(first);
            debug_assert!(pages == 0 || self.die_of(first + pages - 1) == die);
            self.spare_reads_on(die, pages);
            return;
        }
        for ppn in first..first + pages {
            let die = self.die_of(ppn);
            self.read_on(FlashOp::SpareRead, die, self.spare_read);
        }
    }

    /// [`Timeline::spare_read_run`] of `reads` spare reads all on `die` (one die, or placed per die): what
    /// [`Timeline::read_on`] of each does, the same sums in the same order, with the die's and the request's
    /// times kept in registers through the run.
    fn spare_reads_on(&mut self, die: u32, reads: u32) {
        let (d, c) = (die as usize, self.channel_of(die));
        let mut run = RunSums::of(self, d, c);
        for _ in 0..reads {
            self.read_in_run(FlashOp::SpareRead, d, c, self.spare_read, &mut run);
        }
        run.store(self, d, c);
    }

    /// One read of a run on die `d` (channel `c`): [`Timeline::read_on`] with the sums in `run`; returns its
    /// end.
    #[inline(always)]
    fn read_in_run(
        &mut self,
        op: FlashOp,
        d: usize,
        c: usize,
        cost: Cost,
        run: &mut RunSums,
    ) -> f64 {
        let start = later(self.die_free[d], self.ready);
        let out = self.reserve(c, start + cost.array, cost.channel);
        let end = out + cost.channel;
        run.channel_busy += cost.channel;
        self.die_free[d] = end;
        run.die_busy += end - start;
        run.frontier = later(run.frontier, end);
        self.span(op, d, c, start, end);
        run.read_end = end;
        end
    }

    /// Times one flash operation on page `ppn` of the scheme (for an erase, any page of the block).
    #[inline]
    pub fn op(&mut self, op: FlashOp, ppn: u32) {
        if !self.open {
            return;
        }
        if self.planes > 1 && self.op_on_planes(op, ppn) {
            return;
        }
        let die = self.die_of(ppn);
        match op {
            FlashOp::Read => self.read_on(op, die, self.read),
            FlashOp::SpareRead => self.read_on(op, die, self.spare_read),
            FlashOp::Program => {
                self.program_on(op, die, self.program);
            }
            FlashOp::SpareProgram => {
                self.program_on(op, die, self.spare_program);
            }
            FlashOp::Erase => {
                let after = later(self.ready, self.frontier);
                if self.die_pages != 0 {
                    self.erase_on(die, after);
                } else {
                    (0..self.dies).for_each(|die| self.erase_on(die, after));
                }
            }
        }
    }

    /// [`Timeline::op`] of a read or program on a die of several planes: joins the die's open multi-plane
    /// operation where rule 7 lets it, else runs alone and opens one; true then. Any other operation closes
    /// what it ends (a spare access its die's, an erase every die's) and is left to the caller: false.
    fn op_on_planes(&mut self, op: FlashOp, ppn: u32) -> bool {
        let die = self.die_of(ppn);
        let d = die as usize;
        if !matches!(op, FlashOp::Read | FlashOp::Program) {
            if op == FlashOp::Erase {
                self.generation += 1;
            } else {
                self.multi_plane[d] = MultiPlane::CLOSED;
            }
            return false;
        }
        let (plane, offset) = self.plane_and_offset(ppn);
        let open = self.multi_plane[d];
        if open.generation == self.generation
            && open.op == op
            && open.offset == offset
            && open.planes & (1 << plane) == 0
        {
            if op == FlashOp::Read {
                self.join_read(die, plane);
            } else {
                self.join_program(die, plane);
            }
            return true;
        }
        let first_span = self.spans.as_ref().map_or(0, Vec::len);
        let (start, at) = if op == FlashOp::Read {
            let start = later(self.die_free[d], self.ready);
            self.read_on(op, die, self.read);
            (start, start + self.read.array)
        } else {
            self.program_on(op, die, self.program)
        };
        self.multi_plane[d] = MultiPlane {
            generation: self.generation,
            op,
            offset,
            planes: 1 << plane,
            start,
            at,
            first_span,
        };
        true
    }

    /// The plane of page `ppn` of the scheme (its partition's base added) and its page offset within its
    /// physical block (rule 7).
    fn plane_and_offset(&self, ppn: u32) -> (u32, u32) {
        let (page, dies_in_block) = match ppn.checked_rem(self.die_pages) {
            Some(local) => (local % self.pages_per_block, 1),
            None => (ppn % self.pages_per_block, self.dies),
        };
        let units_in_block = dies_in_block * self.planes;
        (page % units_in_block / dies_in_block, page / units_in_block)
    }

    /// A read joining its die's open multi-plane read: its data is ready when the shared array time ends,
    /// and moves out after the die's last transfer.
    fn join_read(&mut self, die: u32, plane: u32) {
        let (d, c) = (die as usize, self.channel_of(die));
        let open = self.multi_plane[d];
        let cost = self.read;
        let out = self.reserve(c, later(open.at, self.die_free[d]), cost.channel);
        let end = out + cost.channel;
        self.channel_busy[c] += cost.channel;
        self.die_busy[d] += end - self.die_free[d];
        self.die_free[d] = end;
        self.frontier = later(self.frontier, end);
        self.last_read_end = end;
        self.span(FlashOp::Read, d, c, open.start, end);
        self.multi_plane[d].planes |= 1 << plane;
    }

    /// A program joining its die's open multi-plane program: its data moves after the last plane's, and the
    /// array time of every plane starts when it is in.
    fn join_program(&mut self, die: u32, plane: u32) {
        let (d, c) = (die as usize, self.channel_of(die));
        let open = self.multi_plane[d];
        let cost = self.program;
        let ready = later(later(open.at, self.ready), self.last_read_end);
        let start = self.reserve(c, ready, cost.channel);
        let moved = start + cost.channel;
        let end = moved + cost.array;
        self.channel_busy[c] += cost.channel;
        self.die_busy[d] += end - self.die_free[d];
        self.die_free[d] = end;
        self.frontier = later(self.frontier, end);
        if let Some(spans) = &mut self.spans {
            // The planes joined before end with this one.
            for span in &mut spans[open.first_span..] {
                if span.die == die {
                    span.end = end;
                }
            }
        }
        self.span(FlashOp::Program, d, c, start, end);
        let joined = &mut self.multi_plane[d];
        joined.planes |= 1 << plane;
        joined.at = moved;
    }

    /// Books `len` microseconds of channel `c` at the earliest free time at or after `ready`; returns the
    /// start.
    #[inline]
    fn reserve(&mut self, c: usize, ready: f64, len: f64) -> f64 {
        // A channel of one die is free whenever its die is: each of its transfers is the die's, after the end
        // of the die's last operation, so after every transfer booked on the channel.
        if len <= 0.0 || self.dies_per_channel == 1 {
            return ready;
        }
        let channel = &mut self.channels[c];
        channel.forget(self.last_dispatch);
        if channel.append(ready, len) {
            return ready;
        }
        self.reserve_in_gap(c, ready, len)
    }

    /// [`Timeline::reserve`] of a transfer that is not after every booked one.
    #[inline(never)]
    fn reserve_in_gap(&mut self, c: usize, ready: f64, len: f64) -> f64 {
        if self.channels[c].booked.len() > LONG_BOOKING {
            let horizon = self.channel_horizon(c);
            self.channels[c].forget(horizon);
        }
        self.channels[c].fit(ready, len)
    }

    /// The earliest a transfer on channel `c` can start from now on: no operation starts before the current
    /// request's submission (rule 1; submissions never go back), nor on a die before the end of the die's
    /// last operation (rule 2) or, where a program may join the die's open multi-plane program, before that
    /// program's last transfer ended (rule 7), and every transfer is its die's (rule 3).
    fn channel_horizon(&self, c: usize) -> f64 {
        let channels = self.spec.channels as usize;
        let earliest_transfer = |d: usize| match self.multi_plane.get(d) {
            Some(open) if open.generation == self.generation && open.op == FlashOp::Program => {
                earlier(self.die_free[d], open.at)
            }
            _ => self.die_free[d],
        };
        (c..self.die_free.len())
            .step_by(channels)
            .map(earliest_transfer)
            .fold(f64::INFINITY, f64::min)
            .max(self.last_dispatch)
    }

    /// The channel of `die` ([`ArraySpec::channel_of_die`]), without a division where the channels are a
    /// power of two.
    #[inline(always)]
    fn channel_of(&self, die: u32) -> usize {
        if self.spec.channels.is_power_of_two() {
            (die & (self.spec.channels - 1)) as usize
        } else {
            self.spec.channel_of_die(die) as usize
        }
    }

    #[inline]
    fn read_on(&mut self, op: FlashOp, die: u32, cost: Cost) {
        let (d, c) = (die as usize, self.channel_of(die));
        let start = later(self.die_free[d], self.ready);
        let out = self.reserve(c, start + cost.array, cost.channel);
        let end = out + cost.channel;
        self.channel_busy[c] += cost.channel;
        self.occupy(op, d, c, start, end);
        self.last_read_end = end;
    }

    /// Returns the start and end of the program's transfer.
    #[inline]
    fn program_on(&mut self, op: FlashOp, die: u32, cost: Cost) -> (f64, f64) {
        let (d, c) = (die as usize, self.channel_of(die));
        let ready = later(later(self.die_free[d], self.ready), self.last_read_end);
        let start = self.reserve(c, ready, cost.channel);
        let moved = start + cost.channel;
        self.channel_busy[c] += cost.channel;
        self.occupy(op, d, c, start, moved + cost.array);
        (start, moved)
    }

    /// An erase on `die` no earlier than `after`: the end of every operation issued before it in the request
    /// (rule 5).
    fn erase_on(&mut self, die: u32, after: f64) {
        let cost = self.erase;
        let (d, c) = (die as usize, self.channel_of(die));
        let ready = later(self.die_free[d], after);
        let start = self.reserve(c, ready, cost.channel);
        self.channel_busy[c] += cost.channel;
        self.occupy(
            FlashOp::Erase,
            d,
            c,
            start,
            start + cost.channel + cost.array,
        );
    }

    #[inline]
    fn occupy(&mut self, op: FlashOp, d: usize, c: usize, start: f64, end: f64) {
        self.die_free[d] = end;
        self.die_busy[d] += end - start;
        self.frontier = later(self.frontier, end);
        self.span(op, d, c, start, end);
    }

    #[inline(always)]
    fn span(&mut self, op: FlashOp, d: usize, c: usize, start: f64, end: f64) {
        if let Some(spans) = &mut self.spans {
            spans.push(Span {
                op,
                die: d as u32,
                channel: c as u32,
                start,
                end,
            });
        }
    }

    /// Advances the queue-depth sweep to `t`: completions up to then leave the system.
    fn sweep_to(&mut self, t: f64) {
        while let Some(&k) = self.in_system.peek() {
            let done = time(k);
            if done > t {
                break;
            }
            self.in_system.pop();
            self.depth_area += self.sweep_n as f64 * (done - self.sweep_t).max(0.0);
            self.sweep_t = self.sweep_t.max(done);
            self.sweep_n -= 1;
        }
        self.depth_area += self.sweep_n as f64 * (t - self.sweep_t).max(0.0);
        self.sweep_t = self.sweep_t.max(t);
    }

    /// The run's figures: response times, throughput, utilization and queue depth over the span from the
    /// first arrival to the last end of anything.
    pub fn figures(&mut self) -> ArrayFigures {
        let end = self
            .end
            .max(self.frontier)
            .max(self.die_free.iter().copied().fold(0.0, f64::max));
        self.sweep_to(end);
        let start = self.first_arrival.unwrap_or(0.0);
        let span = (end - start).max(0.0);
        let per = |busy: &[f64]| -> (f64, f64) {
            if span <= 0.0 {
                return (0.0, 0.0);
            }
            let u: Vec<f64> = busy.iter().map(|b| (b / span).min(1.0)).collect();
            (
                u.iter().sum::<f64>() / u.len() as f64,
                u.iter().copied().fold(0.0, f64::max),
            )
        };
        let (die_mean, die_max) = per(&self.die_busy);
        let (channel_mean, channel_max) = per(&self.channel_busy);
        let rate = |n: f64| if span > 0.0 { n / span * 1e6 } else { 0.0 };
        ArrayFigures {
            spec: self.spec,
            placement: if self.die_pages == 0 {
                ArrayPlacement::Striped
            } else {
                ArrayPlacement::PerDie
            },
            queue_depth: self.queue_depth as u32,
            time_scale: self.time_scale,
            span_us: span,
            read: self.reads.summary(),
            write: self.writes.summary(),
            iops: rate((self.reads.hist.len() + self.writes.hist.len()) as f64),
            mb_per_s: rate(self.bytes as f64) / 1e6,
            die_utilization: (die_mean, die_max),
            channel_utilization: (channel_mean, channel_max),
            depth_mean: if span > 0.0 {
                self.depth_area / span
            } else {
                0.0
            },
            depth_max: self.depth_max,
            requests: self.requests,
        }
    }
}
