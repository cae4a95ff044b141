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
//! Host side: request `i` arrives at its trace time x `time_scale`; one without a time (a built-in workload
//! without idle gaps, a CSV trace whose first request has no time) arrives when the host can submit it, which
//! makes a closed loop. A request at time 0 of a timed trace arrives at the start. At most
//! `queue_depth` requests are in the device; the others wait in the host, in arrival order, and that wait is
//! part of their response time. A mount (after a power cut, or at the end of the run) is timed apart from the
//! requests, on idle dies from power-on ([`Timeline::at_power_on`]); after a cut, no die works and no request
//! is dispatched before the mount ends ([`Timeline::power_on_after`]).
//!
//! Every operation is O(1) (an erase O(dies)): a transfer ready after the start of the latest one booked on
//! its channel and the end of every other is placed at once; on a channel of more than two striped dies, one
//! ready after the end of all but the channel's 32 latest transfers is placed among those; any other walks
//! each other die's transfers of the channel from where its die's last walk stopped, so each transfer is
//! passed once by each die of its channel (O(1) amortized). A request is O(log queue_depth). A channel's
//! booked transfers are kept per die, each die's in time order, so a transfer is always booked at the end of
//! its die's ring, never inserted.

use super::figures::{ArrayFigures, ResponseSummary};
use crate::addr::SourcePage;
use crate::config::Timing;
use crate::config::{ArrayPlacement, ArraySpec};
use crate::stats::{nearest_ns, to_3_figures, TimeCounts};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
    times: TimeCounts,
    sum: f64,
    max: f64,
}

impl Responses {
    fn new() -> Responses {
        Responses {
            times: TimeCounts::new(),
            sum: 0.0,
            max: 0.0,
        }
    }

    fn record(&mut self, us: f64) {
        self.times.record(nearest_ns(us));
        self.sum += us;
        self.max = later(self.max, us);
    }

    fn summary(&self) -> ResponseSummary {
        let n = self.times.len();
        if n == 0 {
            return ResponseSummary::default();
        }
        // Every quantile in one pass over the histogram (they are in increasing order), to 3 significant
        // figures as the latencies' are (`sim/latency.rs`), never above the exact maximum, which is the last.
        let cdf: Vec<(f64, f64)> = self
            .times
            .histogram()
            .value_at_quantiles(CDF_QUANTILES)
            .zip(CDF_QUANTILES)
            .map(|(ns, q)| {
                let us = if q < 1.0 {
                    to_3_figures(ns as f64 / 1000.0).min(self.max)
                } else {
                    self.max
                };
                (us, q)
            })
            .collect();
        let at = |q: f64| {
            cdf[CDF_QUANTILES
                .iter()
                .position(|&x| x == q)
                .expect("a kept quantile")]
            .0
        };
        ResponseSummary {
            count: n,
            mean: self.sum / n as f64,
            p50: at(0.5),
            p99: at(0.99),
            p99_9: at(0.999),
            max: self.max,
            cdf,
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

/// A die's state: when its last operation ends, how long it has been busy, and its transfers on its channel.
/// Kept together, so that booking an operation checks one index and holds one address for all of them.
struct Die {
    /// When its last operation ends.
    free: f64,
    /// The time it has been busy (its utilization's numerator).
    busy: f64,
    transfers: DieTransfers,
}

impl Die {
    fn new() -> Die {
        Die {
            free: 0.0,
            busy: 0.0,
            transfers: DieTransfers::default(),
        }
    }
}

/// A die's transfers on its channel that another die of the channel may still meet: (start, end), in time
/// order, as a die does one thing at a time (each of its transfers is ready after its last one ended). A
/// transfer of another die takes the earliest gap among them at or after the time it is ready (back-filling,
/// rule 2), so it never waits behind a transfer booked later for a die that is still busy. A ring of a power
/// of two places: it grows when full, never per request.
struct DieTransfers {
    ring: Vec<(f64, f64)>,
    /// The ring's first place and how many it holds.
    head: usize,
    len: usize,
    /// How many transfers it has forgotten: the first it holds is the die's transfer number `forgotten`.
    forgotten: u64,
    /// The length at which the next booking first forgets the transfers no die of the channel can meet again.
    forget_at: usize,
    /// The length at which the next booking first forgets or grows the ring (full): the lesser.
    room_at: usize,
}

impl Default for DieTransfers {
    fn default() -> DieTransfers {
        DieTransfers {
            ring: vec![(0.0, 0.0); 2 * SHORT_BOOKING],
            head: 0,
            len: 0,
            forgotten: 0,
            forget_at: SHORT_BOOKING,
            room_at: SHORT_BOOKING,
        }
    }
}

impl DieTransfers {
    /// The `i`th transfer booked (`i` below `len`).
    #[inline(always)]
    fn at(&self, i: usize) -> (f64, f64) {
        self.ring[(self.head + i) & (self.ring.len() - 1)]
    }

    /// Books a transfer after every one held (the ring is not full: [`Lanes::make_room`]).
    #[inline(always)]
    fn push(&mut self, start: f64, end: f64) {
        debug_assert!(self.len < self.ring.len());
        let place = (self.head + self.len) & (self.ring.len() - 1);
        self.ring[place] = (start, end);
        self.len += 1;
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let ring = (0..self.len)
            .map(|i| self.at(i))
            .chain((0..self.len).map(|_| (0.0, 0.0)));
        self.ring = ring.collect();
        self.head = 0;
    }

    /// The start of the transfer numbered `number` (see `forgotten`), infinite if none is booked yet.
    #[inline(always)]
    fn start_of(&self, number: u64) -> f64 {
        let i = (number - self.forgotten) as usize;
        if i < self.len {
            self.at(i).0
        } else {
            f64::INFINITY
        }
    }

    /// Forgets the transfers that end by `past`.
    fn forget(&mut self, past: f64) {
        let ended = self.first_ending_after(past);
        self.head = (self.head + ended) & (self.ring.len() - 1);
        self.len -= ended;
        self.forgotten += ended as u64;
    }

    /// The index of the first transfer that ends after `t` (`len` if none does). The ends are in order: a
    /// galloping search, O(log) of the answer.
    #[inline]
    fn first_ending_after(&self, t: f64) -> usize {
        let n = self.len;
        // Every index below `lo` ends by `t`; the answer is at most `hi`.
        let (mut lo, mut step) = (0, 1);
        while lo + step <= n && self.at(lo + step - 1).1 <= t {
            lo += step;
            step *= 2;
        }
        let mut hi = (lo + step - 1).min(n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.at(mid).1 <= t {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// A die's ring of transfers longer than this first forgets those every other die of its channel is past
/// ([`Lanes::forget_met`]); then, at twice what it keeps.
const SHORT_BOOKING: usize = 64;

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

/// A request's completion in a min-heap: its time, and whether it counts in the system's queue depth (a read
/// or write; a trim takes a place in the device only). It orders by time, as the bits of a non-negative f64
/// do; the low bit says whether it counts.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Completion(Reverse<u64>);

impl Completion {
    #[inline]
    fn new(t: f64, counts: bool) -> Completion {
        Completion(Reverse(t.max(0.0).to_bits() << 1 | u64::from(counts)))
    }

    #[inline]
    fn time(self) -> f64 {
        f64::from_bits(self.0 .0 >> 1)
    }

    #[inline]
    fn counts(self) -> bool {
        self.0 .0 & 1 != 0
    }
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

/// Where a striped run's pages are ([`Timeline::striping`]): the die of page `ppn` of the scheme (its
/// partition's base added), its offset's plane-unit; and the channel of a die ([`ArraySpec::channel_of_die`]).
trait Striping: Copy {
    fn die(self, ppn: u32) -> usize;
    fn channel(self, die: usize) -> usize;
}

/// Dies a power of two that divides the scheme's block, so channels a power of two: masks.
#[derive(Clone, Copy)]
struct ByMasks {
    die: u32,
    channel: u32,
}

impl Striping for ByMasks {
    #[inline(always)]
    fn die(self, ppn: u32) -> usize {
        (ppn & self.die) as usize
    }

    #[inline(always)]
    fn channel(self, die: usize) -> usize {
        die & self.channel as usize
    }
}

/// Any other striping: divisions.
#[derive(Clone, Copy)]
struct ByDivision {
    pages_per_block: u32,
    units: u32,
    dies: u32,
    channels: u32,
}

impl Striping for ByDivision {
    #[inline(always)]
    fn die(self, ppn: u32) -> usize {
        ((ppn % self.pages_per_block) % self.units % self.dies) as usize
    }

    #[inline(always)]
    fn channel(self, die: usize) -> usize {
        die % self.channels as usize
    }
}

/// A channel's state: how long it has been busy, and the end of its booked transfers: a transfer ready after
/// the latest one's start and every other one's end is placed without a search (the common case where two
/// dies' transfers are ready together). A channel of more than two striped dies also keeps its latest
/// transfers, apart ([`Recent`]).
#[derive(Clone, Copy)]
struct Channel {
    /// The time it has been busy with transfers.
    busy: f64,
    /// The latest end of any transfer booked on the channel.
    end: f64,
    /// The start of the transfer that ends then.
    last_start: f64,
    /// The latest end of any other.
    before_last: f64,
}

impl Channel {
    const EMPTY: Channel = Channel {
        busy: 0.0,
        end: f64::NEG_INFINITY,
        last_start: f64::NEG_INFINITY,
        before_last: f64::NEG_INFINITY,
    };

    /// A transfer of `len` from `start`, at or after the end of every one booked, is booked: the latest.
    #[inline(always)]
    fn book_latest(&mut self, start: f64, len: f64) {
        (self.before_last, self.last_start) = (self.end, start);
        self.end = start + len;
    }

    /// A transfer from `start` to `end` is booked (it overlaps none booked: one that ends last starts at or
    /// after every other's end).
    #[inline(always)]
    fn book(&mut self, start: f64, end: f64) {
        if end > self.end {
            (self.before_last, self.last_start, self.end) = (self.end, start, end);
        } else {
            self.before_last = later(self.before_last, end);
        }
    }
}

/// The latest transfers booked on a channel of more than two striped dies, so that a transfer ready after
/// every other one's end is placed among them without walking each die's ring: the common case there, where
/// the dies' transfers are ready close together (on 4 striped dies of one channel, 3 to 5 transfers of the
/// channel end after the gap a search finds, on average, and 8 kept already take 9 searches in 10). On a
/// channel of two dies, the walk of the other die's ring costs what this would. Placed per die, a die's work
/// runs far ahead of the others' (its own collections), so that fewer than 2 searches in 100 are among the
/// latest transfers: keeping them would cost more than it saves.
#[derive(Clone, Copy)]
struct Recent {
    /// Every transfer booked on the channel but those kept ends by this.
    settled: f64,
    /// (start, end) in time order: a ring of [`RECENT`] places, `len` held from `head`.
    kept: [(f64, f64); RECENT],
    head: usize,
    len: usize,
}

/// How many of its latest transfers a channel of more than two striped dies keeps ([`Recent`]): on 8 dies of
/// one channel (page-mapped, striped), 8 kept gave 25.4 M flash operations/s, 16 gave 31.6 M, 32 gave 36.6 M
/// and 64 gave 36.8 M.
const RECENT: usize = 32;

impl Recent {
    const EMPTY: Recent = Recent {
        settled: f64::NEG_INFINITY,
        kept: [(0.0, 0.0); RECENT],
        head: 0,
        len: 0,
    };

    /// The `i`th transfer kept (`i` below `len`).
    #[inline(always)]
    fn at(&self, i: usize) -> (f64, f64) {
        self.kept[(self.head + i) % RECENT]
    }

    /// The start of the earliest gap of `len` at or after `ready` among the transfers kept, where every
    /// other ended by then (`ready >= settled`), the start of the first transfer after it (infinite if none
    /// is), and where that is among them (a transfer in the gap goes there).
    #[inline(always)]
    fn gap(&self, ready: f64, len: f64) -> (f64, f64, usize) {
        // The first that ends after `ready`: they end in order, and only the last few do.
        let mut i = self.len;
        while i > 0 && self.at(i - 1).1 > ready {
            i -= 1;
        }
        let mut at = ready;
        while i < self.len {
            let (start, end) = self.at(i);
            if start >= at + len {
                return (at, start, i);
            }
            at = end;
            i += 1;
        }
        (at, f64::INFINITY, i)
    }

    /// Keeps a transfer from `start` to `end`, which overlaps none booked, in its place in time order (`place`
    /// if it is known); the earliest kept leaves if they are full (or it, if it is earlier still).
    #[inline(always)]
    fn keep(&mut self, start: f64, end: f64, place: Place) {
        let mut i = match place {
            Place::Last => self.len,
            Place::BeforeLast => self.len - 1,
            Place::At(i) => i,
            Place::Unknown => {
                if self.len == RECENT && start < self.kept[self.head].0 {
                    self.settled = later(self.settled, end);
                    return;
                }
                let mut i = self.len;
                while i > 0 && self.at(i - 1).0 > start {
                    i -= 1;
                }
                i
            }
        };
        if self.len == RECENT {
            if i == 0 {
                self.settled = later(self.settled, end);
                return;
            }
            self.settled = later(self.settled, self.kept[self.head].1);
            self.head = (self.head + 1) % RECENT;
            self.len -= 1;
            i -= 1;
        }
        let mut j = self.len;
        while j > i {
            self.kept[(self.head + j) % RECENT] = self.at(j - 1);
            j -= 1;
        }
        self.kept[(self.head + i) % RECENT] = (start, end);
        self.len += 1;
    }
}

/// Where a transfer goes among a channel's latest ones ([`Recent::keep`]), where the search that placed it
/// knows: after them all, before the last, at a place found among them, or not known.
#[derive(Clone, Copy)]
enum Place {
    Last,
    BeforeLast,
    At(usize),
    Unknown,
}

/// [`Timeline::channel_mask`] where the channels are not a power of two.
const NOT_A_MASK: u32 = u32::MAX;

/// The most planes a die may have for its planes' operations to join (rule 7): a bit each in a word.
const MAX_JOINED_PLANES: u32 = 64;

/// What booking an operation touches, borrowed apart from the rest of the timeline ([`Timeline::lanes`]):
/// the dies' and channels' times and transfers, and what forgetting a die's transfers reads. A loop over a run
/// of operations holds one, so the addresses stay in registers: a search for a gap or a forgetting is handed
/// the slices it needs, never the whole.
struct Lanes<'t, S: SpanSink, H: Shape> {
    die: &'t mut [Die],
    met: &'t mut [u64],
    channel: &'t mut [Channel],
    spans: S,
    /// What [`earliest_transfer`] reads.
    multi_plane: &'t [MultiPlane],
    generation: u64,
    last_dispatch: f64,
    channels: usize,
    shape: H,
    /// The channels' latest transfers where they keep them ([`Shape::keep_recent`]), a channel's each.
    recent: &'t mut [Recent],
}

/// How many dies share a channel, and whether the channels keep their latest transfers ([`Recent`]): known
/// when a run's loop is compiled for two dies a channel ([`Pairs`], the common shape), else read at run time
/// ([`AnyShape`]), so that the loop on pairs tests neither a transfer.
trait Shape: Copy {
    fn dies_per_channel(self) -> usize;
    fn keep_recent(self) -> bool;
}

/// Two dies a channel, none of its transfers kept apart.
#[derive(Clone, Copy)]
struct Pairs;

impl Shape for Pairs {
    #[inline(always)]
    fn dies_per_channel(self) -> usize {
        2
    }

    #[inline(always)]
    fn keep_recent(self) -> bool {
        false
    }
}

/// Any shape, read at run time.
#[derive(Clone, Copy)]
struct AnyShape {
    dies_per_channel: usize,
    keep_recent: bool,
}

impl Shape for AnyShape {
    #[inline(always)]
    fn dies_per_channel(self) -> usize {
        self.dies_per_channel
    }

    #[inline(always)]
    fn keep_recent(self) -> bool {
        self.keep_recent
    }
}

impl<S: SpanSink, H: Shape> Lanes<'_, S, H> {
    /// Books `len` microseconds of die `d`'s channel `c` at the earliest free time at or after `ready` (the
    /// channel's busy time counts them); returns the start.
    #[inline(always)]
    fn reserve(&mut self, d: usize, c: usize, ready: f64, len: f64) -> f64 {
        self.channel[c].busy += len;
        self.place(d, c, ready, len)
    }

    /// [`Lanes::reserve`] but for the channel's busy time.
    #[inline(always)]
    fn place(&mut self, d: usize, c: usize, ready: f64, len: f64) -> f64 {
        let channel = &mut self.channel[c];
        // A channel of one die is free whenever its die is: each of its transfers is the die's, after the end
        // of the die's last operation, so after every transfer booked on the channel.
        if len <= 0.0 || self.shape.dies_per_channel() == 1 {
            return ready;
        }
        let booked = *channel;
        let (start, place) = if ready >= booked.end {
            channel.book_latest(ready, len);
            (ready, Place::Last)
        } else if ready >= booked.before_last {
            // Only the latest transfer may be in the way.
            if ready + len <= booked.last_start {
                // In the gap before it, after every other.
                channel.before_last = ready + len;
                (ready, Place::BeforeLast)
            } else {
                channel.book_latest(booked.end, len);
                (booked.end, Place::Last)
            }
        } else {
            let (start, place) = self.search(d, c, ready, len);
            self.channel[c].book(start, start + len);
            (start, place)
        };
        self.keep_transfer(d, c, start, start + len, place);
        start
    }

    /// The start of the earliest gap of `len` at or after `ready` on die `d`'s channel `c`, where some
    /// transfer other than the latest ends after `ready`.
    #[inline(always)]
    fn search(&mut self, d: usize, c: usize, ready: f64, len: f64) -> (f64, Place) {
        if self.shape.keep_recent() && ready >= self.recent[c].settled {
            let (start, _, i) = self.recent[c].gap(ready, len);
            (start, Place::At(i))
        } else {
            (self.walk(d, c, ready, len), Place::Unknown)
        }
    }

    /// [`Lanes::search`], and the start of the first transfer booked after the gap (infinite if none is).
    #[inline(always)]
    fn search_to_gap_end(&mut self, d: usize, c: usize, ready: f64, len: f64) -> (f64, f64) {
        if self.shape.keep_recent() && ready >= self.recent[c].settled {
            let (start, gap_end, _) = self.recent[c].gap(ready, len);
            (start, gap_end)
        } else {
            self.walk_to_gap_end(d, c, ready, len)
        }
    }

    /// Books die `d`'s transfer of `first` on its channel `c` at the earliest free time at or after `ready`,
    /// then its transfer of `second` at the earliest at or after the first's end (a copy's read out, then its
    /// program in): what two [`Lanes::reserve`]s do, with the same times. Where the second follows the first
    /// in the gap the first found, both are booked as one transfer: one place in the die's ring, and no search
    /// for the second (the channel is busy for the same time, so every later search finds the same gap).
    /// Returns both starts.
    #[inline(always)]
    fn reserve_pair(
        &mut self,
        d: usize,
        c: usize,
        ready: f64,
        first: f64,
        second: f64,
    ) -> (f64, f64) {
        if first <= 0.0 || second <= 0.0 || self.shape.dies_per_channel() == 1 {
            let start = self.reserve(d, c, ready, first);
            return (start, self.reserve(d, c, start + first, second));
        }
        let channel = &mut self.channel[c];
        channel.busy += first;
        channel.busy += second;
        let booked = *channel;
        // The first's start, and the start of the next transfer booked after it: where its gap ends.
        let (start, gap_end) = if ready >= booked.end {
            (ready, f64::INFINITY)
        } else if ready >= booked.before_last {
            if ready + first <= booked.last_start {
                (ready, booked.last_start)
            } else {
                (booked.end, f64::INFINITY)
            }
        } else {
            self.search_to_gap_end(d, c, ready, first)
        };
        let out = start + first;
        let end = out + second;
        if end <= gap_end {
            self.channel[c].book(start, end);
            self.keep_transfer(d, c, start, end, Place::Unknown);
            return (start, out);
        }
        // The gap is too short for both: two transfers.
        self.channel[c].book(start, out);
        self.keep_transfer(d, c, start, out, Place::Unknown);
        (start, self.place(d, c, out, second))
    }

    /// The start of the earliest gap of `len` at or after `ready` among the transfers booked on die `d`'s
    /// channel `c` (its own all ended by `ready`), found in the other dies' rings.
    #[inline(always)]
    fn walk(&mut self, d: usize, c: usize, ready: f64, len: f64) -> f64 {
        if self.shape.dies_per_channel() == 2 {
            // The one other die of the channel: its transfers are the whole walk.
            let (other, met) = self.partner(d, c);
            gap_beside(other, met, ready, len)
        } else {
            let shape = (self.channels, self.shape.dies_per_channel());
            first_gap(self.die, self.met, shape, (d, c), ready, len)
        }
    }

    /// [`Lanes::walk`], and the start of the first transfer booked after the gap (infinite if none is).
    #[inline(always)]
    fn walk_to_gap_end(&mut self, d: usize, c: usize, ready: f64, len: f64) -> (f64, f64) {
        if self.shape.dies_per_channel() == 2 {
            // The other die's transfer that ended the walk is the first after the gap.
            let (other, met) = self.partner(d, c);
            let (start, _, gap_end) = walk_to_gap(other, met, ready, len);
            (start, gap_end)
        } else {
            let start = self.walk(d, c, ready, len);
            (start, self.next_start(d, c))
        }
    }

    /// On a channel `c` of two dies, the other die's ring and die `d`'s cursor into it (`met`).
    #[inline(always)]
    fn partner(&mut self, d: usize, c: usize) -> (&DieTransfers, &mut u64) {
        let k = usize::from(d < self.channels);
        (
            &self.die[c + k * self.channels].transfers,
            &mut self.met[2 * d + k],
        )
    }

    /// After [`Lanes::walk`] for die `d` of channel `c`: the start of the first transfer booked after the
    /// gap it found (infinite if none is), the least start at the other dies' cursors, which the search left
    /// at their first transfers after the gap.
    #[inline(always)]
    fn next_start(&self, d: usize, c: usize) -> f64 {
        let (channels, per) = (self.channels, self.shape.dies_per_channel());
        let own = d / channels;
        let mut next = f64::INFINITY;
        for k in 0..per {
            if k != own {
                let cursor = self.met[d * per + k];
                next = earlier(next, self.die[c + k * channels].transfers.start_of(cursor));
            }
        }
        next
    }

    /// Keeps die `d`'s transfer from `start` to `end` (booked on its channel `c`) in its ring.
    #[inline(always)]
    fn keep_transfer(&mut self, d: usize, c: usize, start: f64, end: f64, place: Place) {
        if self.die[d].transfers.len >= self.die[d].transfers.room_at {
            let reach = Reach {
                multi_plane: self.multi_plane,
                generation: self.generation,
                last_dispatch: self.last_dispatch,
                channels: self.channels,
            };
            make_room(self.die, reach, d, c);
        }
        self.die[d].transfers.push(start, end);
        if self.shape.keep_recent() {
            self.recent[c].keep(start, end, place);
        }
    }

    /// One read on die `d` of channel `c`, of work submitted at `ready` (rule 3: the die's array time, then
    /// the channel's transfer), the work's latest end kept in `frontier` (a register through a run); returns
    /// the read's end.
    #[inline(always)]
    fn read(
        &mut self,
        op: FlashOp,
        (d, c): (usize, usize),
        cost: Cost,
        ready: f64,
        frontier: &mut f64,
    ) -> f64 {
        let (start, end) = self.place_read(op, (d, c), cost, ready);
        self.die[d].busy += end - start;
        *frontier = later(*frontier, end);
        end
    }

    /// One read of a run on die `d` (channel `c`): [`Lanes::read`] with the sums in `run`; returns its end.
    #[inline(always)]
    fn read_in_run(
        &mut self,
        op: FlashOp,
        (d, c): (usize, usize),
        cost: Cost,
        ready: f64,
        run: &mut RunSums,
    ) -> f64 {
        let (start, end) = self.place_read(op, (d, c), cost, ready);
        run.die_busy += end - start;
        run.frontier = later(run.frontier, end);
        run.read_end = end;
        end
    }

    /// Places a read on die `d` (channel `c`) of work submitted at `ready`: the die's array time, then the
    /// channel's transfer; the die is busy till its end. Returns its start and end; the caller adds the busy
    /// times and the work's latest end where it keeps them.
    #[inline(always)]
    fn place_read(
        &mut self,
        op: FlashOp,
        (d, c): (usize, usize),
        cost: Cost,
        ready: f64,
    ) -> (f64, f64) {
        let start = later(self.die[d].free, ready);
        let out = self.reserve(d, c, start + cost.array, cost.channel);
        let end = out + cost.channel;
        self.die[d].free = end;
        self.span(op, d, c, start, end);
        (start, end)
    }

    /// Places a copy whose read and program are both on die `d` (channel `c`), of work submitted at `ready`:
    /// the read's array time, then its data out; the program waits for it (rule 4), which ended after the
    /// submission, on the same die: its data in as soon as the channel has room after the read's (the two
    /// transfers booked as a pair, [`Lanes::reserve_pair`]), then its array time. Returns the read's start and
    /// end and the program's; the caller adds the busy times and the work's latest end where it keeps them.
    #[inline(always)]
    fn place_copy(
        &mut self,
        (d, c): (usize, usize),
        (read, program): (Cost, Cost),
        ready: f64,
    ) -> [f64; 4] {
        let start = later(self.die[d].free, ready);
        let (out, program_start) =
            self.reserve_pair(d, c, start + read.array, read.channel, program.channel);
        let read_end = out + read.channel;
        self.span(FlashOp::Read, d, c, start, read_end);
        let end = program_start + program.channel + program.array;
        self.die[d].free = end;
        self.span(FlashOp::Program, d, c, program_start, end);
        [start, read_end, program_start, end]
    }

    #[inline(always)]
    fn span(&mut self, op: FlashOp, d: usize, c: usize, start: f64, end: f64) {
        self.spans.keep(op, d, c, start, end);
    }
}

/// Where the spans of operations go: kept where [`Timeline::keep_spans`] asked (tests: golden timelines), or
/// nowhere. A run's loop is compiled for each ([`on_lanes`]), so that the
/// one without spans tests nothing an operation.
trait SpanSink {
    fn keep(&mut self, op: FlashOp, d: usize, c: usize, start: f64, end: f64);
}

impl SpanSink for Option<&mut Vec<Span>> {
    #[inline(always)]
    fn keep(&mut self, op: FlashOp, d: usize, c: usize, start: f64, end: f64) {
        if let Some(spans) = self {
            spans.push(Span {
                op,
                die: d as u32,
                channel: c as u32,
                start,
                end,
            });
        }
    }
}

/// Spans kept nowhere.
struct NoSpans;

impl SpanSink for NoSpans {
    #[inline(always)]
    fn keep(&mut self, _: FlashOp, _: usize, _: usize, _: f64, _: f64) {}
}

/// What tells how early the dies' next transfers can be ready, for forgetting the transfers no die can meet
/// again ([`forget_met`]).
#[derive(Clone, Copy)]
struct Reach<'t> {
    multi_plane: &'t [MultiPlane],
    generation: u64,
    last_dispatch: f64,
    channels: usize,
}

/// Die `x`'s ring (channel `c`) has reached its length to forget or to grow: it forgets what no other die of
/// its channel can meet, then grows if still full. Out of line and handed only what it needs, so that the
/// loops that book transfers keep their [`Lanes`] in registers.
#[cold]
#[inline(never)]
fn make_room(die: &mut [Die], reach: Reach<'_>, x: usize, c: usize) {
    if die[x].transfers.len >= die[x].transfers.forget_at {
        forget_met(die, reach, x, c);
    }
    let own = &mut die[x].transfers;
    if own.len == own.ring.len() {
        own.grow();
    }
    own.room_at = own.forget_at.min(own.ring.len());
}

/// Forgets die `x`'s transfers that every other die of its channel `c` is past: those that end by the time
/// the other's next transfer can be ready at the earliest (rules 1, 2 and 7: no transfer is ready before the
/// current work's submission, nor before its die's last operation ended or, where it may join the die's open
/// multi-plane program, that program's last transfer did).
fn forget_met(die: &mut [Die], reach: Reach<'_>, x: usize, c: usize) {
    let mut horizon = f64::INFINITY;
    for other in (c..die.len()).step_by(reach.channels) {
        if other != x {
            let ready = earliest_transfer(die, reach.multi_plane, reach.generation, other);
            horizon = earlier(horizon, ready);
        }
    }
    let own = &mut die[x].transfers;
    own.forget(later(horizon, reach.last_dispatch));
    own.forget_at = (2 * own.len).max(SHORT_BOOKING);
}

/// The sums a run of operations on one die keeps in registers ([`Timeline::copy_run`],
/// [`Timeline::spare_read_run`]): the die's busy time, the request's latest end and its last read's end.
struct RunSums {
    die_busy: f64,
    frontier: f64,
    read_end: f64,
}

impl RunSums {
    #[inline(always)]
    fn of(t: &Timeline, d: usize) -> RunSums {
        RunSums {
            die_busy: t.die[d].busy,
            frontier: t.frontier,
            read_end: t.last_read_end,
        }
    }

    #[inline(always)]
    fn store(self, t: &mut Timeline, d: usize) {
        t.die[d].busy = self.die_busy;
        (t.frontier, t.last_read_end) = (self.frontier, self.read_end);
    }
}

/// The start of the earliest gap of `len` at or after `ready` among the transfers of die `d`'s channel `c`
/// (its own all ended by `ready`), of `(channels, dies a channel)`. Each other die's are walked from where
/// `d`'s last search stopped (`met`), as `d`'s transfers are each ready after the last one ended: a transfer
/// of another die is passed once by each die of its channel, so a search costs O(1) amortized.
#[inline(never)]
fn first_gap(
    dies: &[Die],
    met: &mut [u64],
    (channels, per): (usize, usize),
    (d, c): (usize, usize),
    ready: f64,
    len: f64,
) -> f64 {
    let met = &mut met[d * per..(d + 1) * per];
    let own = d / channels;
    let mut at = ready;
    loop {
        let mut moved = false;
        for (k, met) in met.iter_mut().enumerate() {
            if k != own {
                let (to, walked, _) = walk_to_gap(&dies[c + k * channels].transfers, met, at, len);
                (at, moved) = (to, moved || walked);
            }
        }
        // The gap may have moved past the start of another die's transfer walked before: walk again, till
        // none moves.
        if !moved {
            return at;
        }
    }
}

/// [`first_gap`] on a channel of two dies: the start of the earliest gap of `len` at or after `ready` among
/// the other die's transfers `ring`, walked from the searching die's cursor `met` into it.
#[inline(always)]
fn gap_beside(ring: &DieTransfers, met: &mut u64, ready: f64, len: f64) -> f64 {
    walk_to_gap(ring, met, ready, len).0
}

/// Walks `ring` (another die's transfers) from its cursor `met` to the first gap of `len` at or after `at`
/// among them, leaving the cursor at the first transfer not passed; returns the gap's start, whether it
/// moved, and the start of that first transfer not passed (infinite if none is): where the gap ends.
#[inline(always)]
fn walk_to_gap(ring: &DieTransfers, met: &mut u64, mut at: f64, len: f64) -> (f64, bool, f64) {
    let mut moved = false;
    let mut gap_end = f64::INFINITY;
    let mut i = met.saturating_sub(ring.forgotten) as usize;
    while i < ring.len {
        let (start, end) = ring.at(i);
        // One that ended by `at` is passed; one that begins a gap of `len` ends the walk.
        if end > at {
            if start >= at + len {
                gap_end = start;
                break;
            }
            at = end;
            moved = true;
        }
        i += 1;
    }
    *met = ring.forgotten + i as u64;
    (at, moved, gap_end)
}

/// The earliest a transfer of die `d` can be ready from now on but for the work's submission: the end of the
/// die's last operation or, where a program may join the die's open multi-plane program (of the current
/// `generation`), that program's last transfer's end.
#[inline(always)]
fn earliest_transfer(die: &[Die], multi_plane: &[MultiPlane], generation: u64, d: usize) -> f64 {
    match multi_plane.get(d) {
        Some(open) if open.generation == generation && open.op == FlashOp::Program => {
            earlier(die[d].free, open.at)
        }
        _ => die[d].free,
    }
}

/// The loop of [`Timeline::copy_run`] on striped dies: copy `i` reads page `from[i]` (with `base` added) and
/// programs page `to + i`; `(read, program, ready)` its costs and the work's submission, `(frontier,
/// read_end)` the work's latest end and last read's end, returned as they are after the run. A copy whose
/// pages are on one die (a merge's copy of a page to its own offset in a new block) books its two transfers as
/// [`Lanes::reserve_pair`] does, as one where they fit one gap: the program is ready when the read's data is
/// out, as the die's last operation ends then.
#[inline(always)]
fn copies_striped<S: SpanSink>(
    mut lanes: Lanes<'_, S, impl Shape>,
    striping: impl Striping,
    (from, base): (&[impl SourcePage], u32),
    to: u32,
    (read, program, ready): (Cost, Cost, f64),
    (mut frontier, mut read_end): (f64, f64),
) -> (f64, f64) {
    for (i, source) in from.iter().enumerate() {
        let d = striping.die(base + source.page());
        let c = striping.channel(d);
        let target = striping.die(to + i as u32);
        if target == d {
            // The read and the program on one die, booked as an instance per die books them.
            let [start, end_of_read, program_start, end] =
                lanes.place_copy((d, c), (read, program), ready);
            lanes.die[d].busy += end_of_read - start;
            frontier = later(frontier, end_of_read);
            read_end = end_of_read;
            lanes.die[d].busy += end - program_start;
            frontier = later(frontier, end);
            continue;
        }
        read_end = lanes.read(FlashOp::Read, (d, c), read, ready, &mut frontier);
        // The program waits for its read (rule 4).
        let d = target;
        let c = striping.channel(d);
        let after = later(later(lanes.die[d].free, ready), read_end);
        let start = lanes.reserve(d, c, after, program.channel);
        let end = start + program.channel + program.array;
        lanes.die[d].free = end;
        lanes.die[d].busy += end - start;
        frontier = later(frontier, end);
        lanes.span(FlashOp::Program, d, c, start, end);
    }
    (frontier, read_end)
}

/// The loop of [`Timeline::copy_run`] of `copies` copies all on die `d` (channel `c`), its sums in `run`.
#[inline(always)]
fn copies_on<S: SpanSink>(
    mut lanes: Lanes<'_, S, impl Shape>,
    (d, c): (usize, usize),
    copies: usize,
    (read, program, ready): (Cost, Cost, f64),
    run: &mut RunSums,
) {
    for _ in 0..copies {
        let [start, read_end, program_start, end] =
            lanes.place_copy((d, c), (read, program), ready);
        run.die_busy += read_end - start;
        run.frontier = later(run.frontier, read_end);
        run.read_end = read_end;
        run.die_busy += end - program_start;
        run.frontier = later(run.frontier, end);
    }
}

/// The loop of [`Timeline::spare_read_run`] on striped dies, over the scheme's `pages`.
#[inline(always)]
fn spare_reads_striped<S: SpanSink>(
    mut lanes: Lanes<'_, S, impl Shape>,
    striping: impl Striping,
    pages: std::ops::Range<u32>,
    (cost, ready): (Cost, f64),
    (mut frontier, mut read_end): (f64, f64),
) -> (f64, f64) {
    for ppn in pages {
        let d = striping.die(ppn);
        let c = striping.channel(d);
        read_end = lanes.read(FlashOp::SpareRead, (d, c), cost, ready, &mut frontier);
    }
    (frontier, read_end)
}

/// The loop of [`Timeline::spare_read_run`] of `reads` spare reads all on die `d` (channel `c`).
#[inline(always)]
fn spare_reads_on<S: SpanSink>(
    mut lanes: Lanes<'_, S, impl Shape>,
    (d, c): (usize, usize),
    reads: u32,
    (cost, ready): (Cost, f64),
    run: &mut RunSums,
) {
    for _ in 0..reads {
        lanes.read_in_run(FlashOp::SpareRead, (d, c), cost, ready, run);
    }
}

/// Runs `$body` with `$lanes` borrowed from timeline `$t` as a run's loop is compiled for it: keeping spans
/// or not, on channels of two dies ([`Pairs`]) or any other shape, so that the loop tests neither a transfer.
macro_rules! on_lanes {
    ($t:expr, $lanes:ident => $body:expr) => {{
        let shape = $t.shape();
        match (
            $t.spans.is_some(),
            shape.dies_per_channel == 2 && !shape.keep_recent,
        ) {
            (false, true) => {
                let $lanes = $t.lanes_with(|_| NoSpans, Pairs);
                $body
            }
            (false, false) => {
                let $lanes = $t.lanes_with(|_| NoSpans, shape);
                $body
            }
            (true, true) => {
                let $lanes = $t.lanes_with(Option::as_mut, Pairs);
                $body
            }
            (true, false) => {
                let $lanes = $t.lanes_with(Option::as_mut, shape);
                $body
            }
        }
    }};
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
    die: Vec<Die>,
    /// Planes of each die when more than one may join an operation (rule 7), else 1.
    planes: u32,
    /// Per die, the multi-plane operation its last operation opened or joined (empty with one plane).
    multi_plane: Vec<MultiPlane>,
    /// Counts the works (requests, background work) and the runs and erases within them: a multi-plane
    /// operation of an earlier generation is closed.
    generation: u64,
    /// Per die `x` and position `k` on its channel, the number of the first transfer of the channel's `k`th
    /// die that `x`'s last search for a gap did not pass: where its next search starts (every earlier one
    /// ended before `x`'s next transfer can be ready).
    met: Vec<u64>,
    channel: Vec<Channel>,
    /// Each channel's latest transfers where it has more than two dies ([`Recent`]), else none.
    recent: Vec<Recent>,
    /// `channels - 1` where the channels are a power of two (a die's channel is then `die & channel_mask`),
    /// else [`NOT_A_MASK`].
    channel_mask: u32,
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
    /// Completions of the requests in the device (at most `queue_depth`), till the queue-depth sweep passes
    /// them: a completion leaves the device and the system at once, unless the device was full and it made
    /// room for the next request before the sweep reached it.
    in_device: BinaryHeap<Completion>,
    /// Completions of requests out of the device (they made room, or a power cut abandoned them) that the
    /// sweep has not passed: still in the system.
    out_of_device: BinaryHeap<Completion>,
    last_arrival: f64,
    last_dispatch: f64,
    last_completion: f64,
    first_arrival: Option<f64>,
    /// The latest time anything ended.
    end: f64,
    /// The sweep of read and write requests in the system over time (a trim takes a place in the device but
    /// is not counted, as it has no response time): how many now (signed: its conversion to f64 is then one
    /// instruction), since when, the integral, the most.
    sweep_n: i64,
    sweep_t: f64,
    depth_area: f64,
    depth_max: u64,
    requests: u64,
    /// Host requests that arrived at their trace time (the others were submitted as a closed loop).
    timed_requests: u64,
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
            die: (0..dies).map(|_| Die::new()).collect(),
            planes,
            multi_plane: if planes > 1 {
                vec![MultiPlane::CLOSED; dies as usize]
            } else {
                Vec::new()
            },
            generation: 1,
            met: vec![0; (dies * (dies / spec.channels)) as usize],
            channel: vec![Channel::EMPTY; spec.channels as usize],
            recent: if dies / spec.channels > 2 {
                vec![Recent::EMPTY; spec.channels as usize]
            } else {
                Vec::new()
            },
            channel_mask: if spec.channels.is_power_of_two() {
                spec.channels - 1
            } else {
                NOT_A_MASK
            },
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
            out_of_device: BinaryHeap::new(),
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
            timed_requests: 0,
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
        *self = self.fresh();
        if keep {
            self.keep_spans();
        }
    }

    /// A timeline of the same shape, placement and costs with no time or figure yet.
    fn fresh(&self) -> Timeline {
        let costs = [
            self.read,
            self.spare_read,
            self.program,
            self.spare_program,
            self.erase,
        ];
        let mut fresh = Timeline::build(
            self.spec,
            costs,
            self.pages_per_block,
            self.queue_depth,
            self.time_scale,
        );
        fresh.die_pages = self.die_pages;
        fresh
    }

    /// A timeline of this array (its shape, placement and costs) whose dies and channels are all idle at
    /// time 0, with work open from then: a mount after power-on, timed apart from the run's requests. Its
    /// operations run by the same rules as a request's, so each die scans its pages while the others scan
    /// theirs.
    pub fn at_power_on(&self) -> Timeline {
        let mut fresh = self.fresh();
        fresh.begin_background();
        fresh
    }

    /// When the open work ends: its last operation's end, or its controller time after its start if that
    /// is later (as a request's completion, [`Timeline::end_request`]); its start if it did nothing.
    pub fn work_end(&self) -> f64 {
        later(self.frontier, self.ready + self.controller_us)
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

    /// Starts timing a host request of `bytes` that arrives at trace time `trace_us` (None: no time, closed
    /// loop). Returns its submission time.
    pub fn begin_request(&mut self, kind: Kind, trace_us: Option<f64>, bytes: u64) -> f64 {
        let arrival = match trace_us {
            Some(t) => {
                self.timed_requests += 1;
                later(t * self.time_scale, self.last_arrival)
            }
            None => later(self.last_dispatch, self.last_arrival),
        };
        self.leave_by(arrival);
        let mut dispatch = later(arrival, self.last_dispatch);
        // The device full: the first to complete makes room.
        let made_room = if self.in_device.len() >= self.queue_depth {
            self.in_device.pop()
        } else {
            None
        };
        if let Some(first) = made_room {
            dispatch = later(dispatch, first.time());
        }
        // A request without a time is submitted when it can be: it arrives then.
        let arrival = if trace_us.is_some() {
            arrival
        } else {
            dispatch
        };
        if let Some(first) = made_room.filter(|first| first.counts()) {
            // It is the earliest in the device; it leaves the system at once where it is also the earliest out of
            // it and completes by the arrival (always so in a closed loop), else the sweep meets it in its turn.
            let earliest = self.out_of_device.peek().is_none_or(|&out| out <= first);
            if earliest && first.time() <= arrival {
                self.leave(first.time());
            } else {
                self.out_of_device.push(first);
            }
        }
        self.sweep_to(arrival);
        if kind != Kind::Other {
            self.sweep_n += 1;
            self.depth_max = self.depth_max.max(self.sweep_n as u64);
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
        let completion = self.work_end();
        self.open = false;
        self.in_device
            .push(Completion::new(completion, self.kind != Kind::Other));
        self.last_completion = later(self.last_completion, completion);
        self.end = later(self.end, completion);
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
    /// nothing is timed until the next request or background work (the mount is timed apart,
    /// [`Timeline::at_power_on`]; [`Timeline::power_on_after`] then says when the device is back).
    pub fn abandon(&mut self) {
        if self.open {
            self.open = false;
            let now = self.frontier;
            if self.kind != Kind::Other {
                self.out_of_device.push(Completion::new(now, true));
            }
            self.end = later(self.end, now);
        }
    }

    /// The device is back from a power cut after a mount of `mount_us` (its time apart, from power-on): no
    /// die works and no request is dispatched before then. Every request but the one the cut landed in
    /// completes ([`Timeline::abandon`]), as the scheme issued their operations before the cut: the power goes
    /// down when the last operation ends, and comes back at once.
    pub fn power_on_after(&mut self, mount_us: f64) {
        let back = self.end + mount_us;
        for die in &mut self.die {
            die.free = later(die.free, back);
        }
        self.last_dispatch = later(self.last_dispatch, back);
        self.last_completion = later(self.last_completion, back);
        self.end = back;
    }

    /// Starts background work (idle-time garbage collection, the end-of-trace flush): it starts once the
    /// last request has completed.
    pub fn begin_background(&mut self) {
        self.kind = Kind::Other;
        self.start_work(later(self.last_completion, self.last_dispatch));
    }

    /// Background work is done.
    pub fn end_background(&mut self) {
        self.open = false;
        self.end = later(self.end, self.frontier);
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
        match self.striping() {
            Ok(masks) => masks.die(ppn) as u32,
            Err(divisions) => divisions.die(ppn) as u32,
        }
    }

    /// Times a run of copies ([`crate::device::Device::copy_run`]): page `from[i]` read, then programmed to
    /// page `to + i`, for each `i` in order, exactly as [`Timeline::op`] of each would; every page of the
    /// scheme's partition, whose first page is `base`.
    pub fn copy_run(&mut self, from: &[impl SourcePage], to: u32, base: u32) {
        if !self.open {
            return;
        }
        self.generation += 1;
        // One die, or placed per die: every copy of the run is on one die.
        if self.die_pages != 0 || self.dies == 1 {
            let die = self.die_of(base + to);
            debug_assert!(from.iter().all(|p| self.die_of(base + p.page()) == die));
            self.copy_run_on(die, from.len());
            return;
        }
        match self.striping() {
            Ok(masks) => self.copy_run_striped(masks, from, base + to, base),
            Err(divisions) => self.copy_run_striped(divisions, from, base + to, base),
        }
    }

    /// How a striped run finds its pages' dies and channels: by masks where the dies are a power of two that
    /// divides the block (the channels, which divide the dies, are then a power of two too), else by
    /// division. The runs' loops are compiled for each, so that the first tests nothing a page.
    fn striping(&self) -> Result<ByMasks, ByDivision> {
        if self.die_mask != 0 {
            debug_assert_ne!(self.channel_mask, NOT_A_MASK);
            Ok(ByMasks {
                die: self.die_mask,
                channel: self.channel_mask,
            })
        } else {
            Err(ByDivision {
                pages_per_block: self.pages_per_block,
                units: self.units,
                dies: self.dies,
                channels: self.spec.channels,
            })
        }
    }

    /// [`Timeline::copy_run`] on striped dies, to the pages from `to` on (the base added): what
    /// [`Timeline::read_on`] then [`Timeline::program_on`] of each copy do, the same sums in the same order,
    /// with the work's times kept in registers through the run (the hot loop of a merge on striped dies).
    fn copy_run_striped(
        &mut self,
        striping: impl Striping,
        from: &[impl SourcePage],
        to: u32,
        base: u32,
    ) {
        let costs = (self.read, self.program, self.ready);
        let times = (self.frontier, self.last_read_end);
        let (from, to) = ((from, base), to);
        (self.frontier, self.last_read_end) =
            on_lanes!(self, lanes => copies_striped(lanes, striping, from, to, costs, times));
    }

    /// [`Timeline::copy_run`] of `copies` copies all on `die` (one die, or placed per die): what [`Timeline::read_on`]
    /// then [`Timeline::program_on`] of each do, the same sums in the same order, with the die's and the
    /// request's times kept in registers through the run (the hot loop of a merge or a GC run).
    fn copy_run_on(&mut self, die: u32, copies: usize) {
        let (d, c) = (die as usize, self.channel_of(die));
        let costs = (self.read, self.program, self.ready);
        let mut run = RunSums::of(self, d);
        on_lanes!(self, lanes => copies_on(lanes, (d, c), copies, costs, &mut run));
        run.store(self, d);
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
        match self.striping() {
            Ok(masks) => self.spare_read_run_striped(masks, first, pages),
            Err(divisions) => self.spare_read_run_striped(divisions, first, pages),
        }
    }

    /// [`Timeline::spare_read_run`] on striped dies.
    fn spare_read_run_striped(&mut self, striping: impl Striping, first: u32, pages: u32) {
        let (cost, ready) = (self.spare_read, self.ready);
        let times = (self.frontier, self.last_read_end);
        let pages = first..first + pages;
        (self.frontier, self.last_read_end) = on_lanes!(self, lanes => spare_reads_striped(lanes, striping, pages, (cost, ready), times));
    }

    /// [`Timeline::spare_read_run`] of `reads` spare reads all on `die` (one die, or placed per die): what
    /// [`Timeline::read_on`] of each does, the same sums in the same order, with the die's and the request's
    /// times kept in registers through the run.
    fn spare_reads_on(&mut self, die: u32, reads: u32) {
        let (d, c) = (die as usize, self.channel_of(die));
        let (cost, ready) = (self.spare_read, self.ready);
        let mut run = RunSums::of(self, d);
        on_lanes!(self, lanes => spare_reads_on(lanes, (d, c), reads, (cost, ready), &mut run));
        run.store(self, d);
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
            let start = later(self.die[d].free, self.ready);
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
        let out = self.reserve(d, c, later(open.at, self.die[d].free), cost.channel);
        let end = out + cost.channel;
        self.die[d].busy += end - self.die[d].free;
        self.die[d].free = end;
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
        let start = self.reserve(d, c, ready, cost.channel);
        let moved = start + cost.channel;
        let end = moved + cost.array;
        self.die[d].busy += end - self.die[d].free;
        self.die[d].free = end;
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

    /// The dies' and channels' state, borrowed apart for a loop ([`Lanes`]), keeping spans where asked.
    #[inline(always)]
    fn lanes(&mut self) -> Lanes<'_, Option<&mut Vec<Span>>, AnyShape> {
        let shape = self.shape();
        self.lanes_with(Option::as_mut, shape)
    }

    /// The channels' shape, read at run time.
    #[inline(always)]
    fn shape(&self) -> AnyShape {
        AnyShape {
            dies_per_channel: self.dies_per_channel as usize,
            keep_recent: self.dies_per_channel > 2 && self.die_pages == 0,
        }
    }

    #[inline(always)]
    fn lanes_with<'t, S: SpanSink, H: Shape>(
        &'t mut self,
        spans: impl FnOnce(&'t mut Option<Vec<Span>>) -> S,
        shape: H,
    ) -> Lanes<'t, S, H> {
        Lanes {
            die: &mut self.die,
            met: &mut self.met,
            channel: &mut self.channel,
            spans: spans(&mut self.spans),
            multi_plane: &self.multi_plane,
            generation: self.generation,
            last_dispatch: self.last_dispatch,
            channels: self.spec.channels as usize,
            shape,
            recent: &mut self.recent,
        }
    }

    /// [`Lanes::reserve`] for one operation.
    #[inline(always)]
    fn reserve(&mut self, d: usize, c: usize, ready: f64, len: f64) -> f64 {
        self.lanes().reserve(d, c, ready, len)
    }

    /// The channel of `die` ([`ArraySpec::channel_of_die`]), without a division where the channels are a
    /// power of two.
    #[inline(always)]
    fn channel_of(&self, die: u32) -> usize {
        if self.channel_mask != NOT_A_MASK {
            (die & self.channel_mask) as usize
        } else {
            self.spec.channel_of_die(die) as usize
        }
    }

    #[inline]
    fn read_on(&mut self, op: FlashOp, die: u32, cost: Cost) {
        let (d, c) = (die as usize, self.channel_of(die));
        let (ready, mut frontier) = (self.ready, self.frontier);
        self.last_read_end = self.lanes().read(op, (d, c), cost, ready, &mut frontier);
        self.frontier = frontier;
    }

    /// Returns the start and end of the program's transfer.
    #[inline]
    fn program_on(&mut self, op: FlashOp, die: u32, cost: Cost) -> (f64, f64) {
        let (d, c) = (die as usize, self.channel_of(die));
        let ready = later(later(self.die[d].free, self.ready), self.last_read_end);
        let start = self.reserve(d, c, ready, cost.channel);
        let moved = start + cost.channel;
        self.occupy(op, d, c, start, moved + cost.array);
        (start, moved)
    }

    /// An erase on `die` no earlier than `after`: the end of every operation issued before it in the request
    /// (rule 5).
    fn erase_on(&mut self, die: u32, after: f64) {
        let cost = self.erase;
        let (d, c) = (die as usize, self.channel_of(die));
        let ready = later(self.die[d].free, after);
        let start = self.reserve(d, c, ready, cost.channel);
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
        self.die[d].free = end;
        self.die[d].busy += end - start;
        self.frontier = later(self.frontier, end);
        self.span(op, d, c, start, end);
    }

    #[inline(always)]
    fn span(&mut self, op: FlashOp, d: usize, c: usize, start: f64, end: f64) {
        self.spans.as_mut().keep(op, d, c, start, end);
    }

    /// Advances the queue-depth sweep to `t`: completions up to then leave the system.
    #[inline]
    fn sweep_to(&mut self, t: f64) {
        self.leave_by(t);
        self.depth_area += self.sweep_n as f64 * later(t - self.sweep_t, 0.0);
        self.sweep_t = later(self.sweep_t, t);
    }

    /// The completions up to `t` leave the device and the system, in time order (the sweep's steps, but for
    /// its last, to `t`).
    #[inline]
    fn leave_by(&mut self, t: f64) {
        // Most often none is due: one comparison says so (a `Completion`'s bits order as its time).
        let bits = |c: Option<&Completion>| c.map_or(u64::MAX, |c| c.0 .0);
        let first = bits(self.in_device.peek()).min(bits(self.out_of_device.peek()));
        if first >> 1 > t.max(0.0).to_bits() {
            return;
        }
        loop {
            let (in_device, out) = (
                self.in_device.peek().copied(),
                self.out_of_device.peek().copied(),
            );
            // The earliest of the two heaps' first (a `Completion` orders the earlier as the greater).
            let Some(first) = in_device.max(out) else {
                return;
            };
            let done = first.time();
            if done > t {
                return;
            }
            if in_device == Some(first) {
                self.in_device.pop();
            } else {
                self.out_of_device.pop();
            }
            if first.counts() {
                self.leave(done);
            }
        }
    }

    /// A request in the system leaves it at `done` (the sweep's next step).
    #[inline(always)]
    fn leave(&mut self, done: f64) {
        self.depth_area += self.sweep_n as f64 * later(done - self.sweep_t, 0.0);
        self.sweep_t = later(self.sweep_t, done);
        self.sweep_n -= 1;
    }

    /// The run's figures: response times, throughput, utilization and queue depth over the span from the
    /// first arrival to the last end of anything.
    pub fn figures(&mut self) -> ArrayFigures {
        let end = self
            .end
            .max(self.frontier)
            .max(self.die.iter().map(|die| die.free).fold(0.0, f64::max));
        self.sweep_to(end);
        let start = self.first_arrival.unwrap_or(0.0);
        let span = (end - start).max(0.0);
        let per = |busy: Vec<f64>| -> (f64, f64) {
            if span <= 0.0 {
                return (0.0, 0.0);
            }
            let u: Vec<f64> = busy.iter().map(|b| (b / span).min(1.0)).collect();
            (
                u.iter().sum::<f64>() / u.len() as f64,
                u.iter().copied().fold(0.0, f64::max),
            )
        };
        let (die_mean, die_max) = per(self.die.iter().map(|die| die.busy).collect());
        let (channel_mean, channel_max) = per(self.channel.iter().map(|c| c.busy).collect());
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
            iops: rate((self.reads.times.len() + self.writes.times.len()) as f64),
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
            timed_requests: self.timed_requests,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A die's ring keeps its transfers in order through growth past its first places, wrap-around and
    /// forgetting, and its search finds the first one that ends after a time from any start at or before it.
    #[test]
    fn a_die_s_transfers_survive_growth_wrapping_and_forgetting() {
        let mut ring = DieTransfers::default();
        let first_places = ring.ring.len();
        // Transfer `n` is (10n, 10n + 4).
        let mut next = 0u64;
        let mut book = |ring: &mut DieTransfers, count: u64| {
            for _ in 0..count {
                if ring.len == ring.ring.len() {
                    ring.grow();
                }
                ring.push(10.0 * next as f64, 10.0 * next as f64 + 4.0);
                next += 1;
            }
        };
        book(&mut ring, 100);
        ring.forget(504.0); // Transfers 0 to 50 end by 504.
        assert_eq!((ring.forgotten, ring.len), (51, 49));
        book(&mut ring, 3 * first_places as u64); // Wraps, then grows twice.
        assert!(ring.ring.len() > first_places && ring.ring.len().is_power_of_two());
        assert_eq!(ring.len, 49 + 3 * first_places);
        for i in 0..ring.len {
            let n = (51 + i) as f64;
            assert_eq!(ring.at(i), (10.0 * n, 10.0 * n + 4.0));
        }
        // The first transfer that ends after 1,000 is number 100 (ends 1,004): index 49.
        assert_eq!(ring.first_ending_after(1000.0), 49);
        assert_eq!(ring.first_ending_after(1004.0), 50);
        assert_eq!(ring.first_ending_after(1e9), ring.len);
        ring.forget(1e9);
        assert_eq!(
            (ring.len, ring.forgotten),
            (0, 100 + 3 * first_places as u64)
        );
    }

    /// A channel's latest transfers give, for any time at or after `settled`, the gap and the next start a
    /// walk over every transfer booked gives, and every transfer that ends after `settled` is kept: through
    /// transfers booked after the latest, among the kept ones and before them all (which leave at once).
    #[test]
    fn the_latest_transfers_find_the_gap_a_walk_of_every_transfer_finds() {
        let gap_in = |all: &[(f64, f64)], ready: f64, len: f64| {
            let mut at = ready;
            for &(start, end) in all {
                if end > at {
                    if start >= at + len {
                        return (at, start);
                    }
                    at = end;
                }
            }
            (at, f64::INFINITY)
        };
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let (mut recent, mut all) = (Recent::EMPTY, Vec::new());
        let (mut now, mut checked, mut earlier_than_kept) = (1000.0, 0, 0);
        for step in 0..20_000 {
            now += (4 + next(8)) as f64;
            // Mostly near the latest transfers, now and then a few in a row far behind them.
            let behind = if step % 64 < 8 { 600 } else { 30 };
            let ready = now - next(behind) as f64;
            let len = (1 + next(9)) as f64;
            let (start, next_start) = gap_in(&all, ready, len);
            // Kept at the place the gap says where it was checked, else where the kept transfers say.
            let mut place = Place::Unknown;
            if ready >= recent.settled {
                let (at, gap_end, i) = recent.gap(ready, len);
                assert_eq!((at, gap_end), (start, next_start), "ready {ready}");
                (place, checked) = (Place::At(i), checked + 1);
            }
            if recent.len == RECENT && start < recent.at(0).0 {
                earlier_than_kept += 1;
            }
            recent.keep(start, start + len, place);
            let place = all.partition_point(|&(s, _)| s < start);
            all.insert(place, (start, start + len));
            // Every transfer that ends after `settled` is kept.
            let kept: Vec<_> = (0..recent.len).map(|i| recent.at(i)).collect();
            let unsettled: Vec<_> = all.iter().filter(|t| t.1 > recent.settled).collect();
            assert!(unsettled.iter().all(|t| kept.contains(t)), "step {step}");
            // What ends long before any later ready time is never met again.
            let past = all.partition_point(|&(_, end)| end < now - 1000.0);
            all.drain(..past);
        }
        assert!(checked > 10_000, "{checked} gaps checked");
        assert!(
            earlier_than_kept > 100,
            "{earlier_than_kept} booked before the kept"
        );
    }
}
