//! Golden timelines of the event-driven array model (`array/timeline.rs`), worked by hand: the exact start
//! and end of every operation, every response time, and the figures over the run.
//!
//! The device: 100 B pages and 10 B spares over a channel of 10 MT/s x 1 byte (a page moves in 10 us, a
//! spare in 1 us), no command overhead; read 50 us, program 200 us, erase 1,000 us. A scheme block of 4
//! pages striped over 2 dies: page `p` is on die `p mod 2`.

mod common;

use common::{draws, golden_array, golden_timeline, span_tuples as spans, GOLDEN_TIMING as TIMING};
use ftlsim_core::array::{ArraySpec, FlashOp, Kind, Timeline};
use ftlsim_core::config::Timing;

fn timeline(channels: u32, dies_per_chip: u32, queue_depth: u32) -> Timeline {
    golden_timeline(channels, dies_per_chip, 1, queue_depth)
}

/// A timeline of `channels` channels of `dies_per_chip` dies whose times are not whole microseconds (a page
/// moves in 33.3... us at 3 MT/s, a spare in 3.3... us; read 49.9 us, spare read 19.7 us, program 201.3 us),
/// so that a sum taken in another order may round otherwise; scheme blocks of 4 pages, 16 requests in the
/// device, keeping spans where asked.
fn inexact_timeline(channels: u32, dies_per_chip: u32, spans: bool) -> Timeline {
    let spec = ArraySpec {
        channel_mts: Some(3.0),
        ..golden_array(channels, dies_per_chip, 1)
    };
    let timing = Timing {
        read_us: 49.9,
        spare_read_us: 19.7,
        program_us: 201.3,
        ..TIMING
    };
    let mut t = Timeline::new(spec, &timing, 100, 10, 4, 16, 1.0);
    if spans {
        t.keep_spans();
    }
    t
}

/// Four requests: a two-page write, two reads, and a write that triggers a garbage collection (a copy of
/// page 3 to page 5, an erase of block 0) before it programs page 6. Returns the response times.
fn four_requests(t: &mut Timeline) -> [f64; 4] {
    t.begin_request(Kind::Write, Some(10.0), 200);
    t.op(FlashOp::Program, 0);
    t.op(FlashOp::Program, 1);
    let a = t.end_request();
    t.begin_request(Kind::Read, Some(15.0), 100);
    t.op(FlashOp::Read, 0);
    let b = t.end_request();
    t.begin_request(Kind::Read, Some(16.0), 100);
    t.op(FlashOp::Read, 1);
    let c = t.end_request();
    t.begin_request(Kind::Write, Some(20.0), 100);
    t.op(FlashOp::Read, 3);
    t.op(FlashOp::Program, 5);
    t.op(FlashOp::Erase, 0);
    t.op(FlashOp::Program, 6);
    let d = t.end_request();
    [a, b, c, d]
}

#[test]
fn two_dies_on_one_channel() {
    use FlashOp::*;
    let mut t = timeline(1, 2, 8);
    let responses = four_requests(&mut t);
    assert_eq!(
        spans(&t),
        vec![
            // The write: page 0 moves over the channel 10-20 and programs until 220; page 1 waits for the
            // channel, moves 20-30, programs until 230.
            (Program, 0, 0, 10.0, 220.0),
            (Program, 1, 0, 20.0, 230.0),
            // The reads wait for their dies: array 220-270 then transfer 270-280; array 230-280, then the
            // channel is free at 280: transfer 280-290.
            (Read, 0, 0, 220.0, 280.0),
            (Read, 1, 0, 230.0, 290.0),
            // The GC's copy: read page 3 on die 1 (290-340, out 340-350), its program after it (350-560).
            (Read, 1, 0, 290.0, 350.0),
            (Program, 1, 0, 350.0, 560.0),
            // The erase after the copy, on both dies at once.
            (Erase, 0, 0, 560.0, 1560.0),
            (Erase, 1, 0, 560.0, 1560.0),
            // The host page after the erase on its die.
            (Program, 0, 0, 1560.0, 1770.0),
        ]
    );
    assert_eq!(responses, [220.0, 265.0, 274.0, 1750.0]);
    let f = t.figures();
    assert_eq!(f.span_us, 1760.0);
    assert_eq!((f.read.count, f.read.mean, f.read.max), (2, 269.5, 274.0));
    assert_eq!(
        (f.write.count, f.write.mean, f.write.max),
        (2, 985.0, 1750.0)
    );
    // Die 0 busy 210 + 60 + 1,000 + 210 = 1,480 us; die 1 210 + 60 + 60 + 210 + 1,000 = 1,540 us.
    assert!((f.die_utilization.0 - 3020.0 / 2.0 / 1760.0).abs() < 1e-12);
    assert!((f.die_utilization.1 - 1540.0 / 1760.0).abs() < 1e-12);
    // The channel moved seven pages (the erase's command takes no time here).
    assert!((f.channel_utilization.0 - 70.0 / 1760.0).abs() < 1e-12);
    // In the system: 1 (10-15), 2 (15-16), 3 (16-20), 4 (20-230), 3 (230-280), 2 (280-290), 1 (290-1,770).
    assert!((f.depth_mean - 2509.0 / 1760.0).abs() < 1e-12);
    assert_eq!(f.depth_max, 4);
    assert!((f.iops - 4.0 / 1760.0 * 1e6).abs() < 1e-9);
    assert!((f.mb_per_s - 500.0 / 1760.0).abs() < 1e-12);
    // Little's law holds exactly: mean depth = throughput x mean response.
    let mean_response = responses.iter().sum::<f64>() / 4.0;
    assert!((f.depth_mean - f.iops / 1e6 * mean_response).abs() < 1e-12);
}

#[test]
fn two_dies_on_two_channels() {
    use FlashOp::*;
    let mut t = timeline(2, 1, 8);
    let responses = four_requests(&mut t);
    assert_eq!(
        spans(&t),
        vec![
            // Each die has its own channel: both pages move at 10-20 and program until 220.
            (Program, 0, 0, 10.0, 220.0),
            (Program, 1, 1, 10.0, 220.0),
            (Read, 0, 0, 220.0, 280.0),
            (Read, 1, 1, 220.0, 280.0),
            (Read, 1, 1, 280.0, 340.0),
            (Program, 1, 1, 340.0, 550.0),
            (Erase, 0, 0, 550.0, 1550.0),
            (Erase, 1, 1, 550.0, 1550.0),
            (Program, 0, 0, 1550.0, 1760.0),
        ]
    );
    assert_eq!(responses, [210.0, 265.0, 264.0, 1740.0]);
    let f = t.figures();
    assert_eq!(f.span_us, 1750.0);
    assert!((f.channel_utilization.1 - 40.0 / 1750.0).abs() < 1e-12);
}

#[test]
fn a_full_device_queue_holds_requests_in_the_host() {
    use FlashOp::*;
    // Queue depth 1, closed loop (no trace times): the second write is submitted when the first completes.
    let mut t = timeline(1, 2, 1);
    assert_eq!(t.begin_request(Kind::Write, None, 100), 0.0);
    t.op(Program, 0);
    assert_eq!(t.end_request(), 210.0);
    assert_eq!(t.begin_request(Kind::Write, None, 100), 210.0);
    t.op(Program, 1);
    assert_eq!(t.end_request(), 210.0);
    // Open loop: a read arriving at 500 while the device holds nothing starts at once; one arriving at 510
    // waits in the host until 570 and its wait counts.
    assert_eq!(t.begin_request(Kind::Read, Some(500.0), 100), 500.0);
    t.op(Read, 0);
    assert_eq!(t.end_request(), 60.0);
    assert_eq!(t.begin_request(Kind::Read, Some(510.0), 100), 560.0);
    t.op(Read, 1);
    assert_eq!(t.end_request(), 110.0);
    assert_eq!(spans(&t)[3], (Read, 1, 0, 560.0, 620.0));
    let f = t.figures();
    assert_eq!(f.depth_max, 2);
    assert!(f.die_utilization.1 <= 1.0);
}

#[test]
fn spare_accesses_move_the_spare_and_background_work_follows_the_last_request() {
    use FlashOp::*;
    let mut t = timeline(1, 1, 4);
    t.begin_request(Kind::Read, Some(100.0), 100);
    t.op(SpareRead, 2);
    t.op(SpareProgram, 2);
    assert_eq!(t.end_request(), 20.0 + 1.0 + 1.0 + 100.0);
    t.begin_background();
    t.op(Erase, 4);
    t.end_background();
    // Operations outside a request or background work (mounting) are not timed.
    t.op(Program, 0);
    assert_eq!(
        spans(&t),
        vec![
            (SpareRead, 0, 0, 100.0, 121.0),
            (SpareProgram, 0, 0, 121.0, 222.0),
            (Erase, 0, 0, 222.0, 1222.0),
        ]
    );
    assert_eq!(t.figures().span_us, 1122.0);
}

#[test]
fn after_a_power_cut_the_dies_wait_for_the_mount() {
    use FlashOp::*;
    let mut t = timeline(1, 2, 8);
    // A write of page 0 (channel 10-20, program till 220), then one of page 1, cut after its program was
    // issued (channel 20-30, program till 230): it leaves at 230, and the power goes down then.
    t.begin_request(Kind::Write, Some(10.0), 100);
    t.op(Program, 0);
    assert_eq!(t.end_request(), 210.0);
    t.begin_request(Kind::Write, Some(15.0), 100);
    t.op(Program, 1);
    t.abandon();
    // The mount takes 801 us from power-on: the device is back at 1,031.
    t.power_on_after(801.0);
    // Reads of pages 0 and 1 that arrived at 40 and 50 are dispatched then: arrays 1,031-1,081, transfers
    // 1,081-1,091 and 1,091-1,101.
    assert_eq!(t.begin_request(Kind::Read, Some(40.0), 100), 1031.0);
    t.op(Read, 0);
    assert_eq!(t.end_request(), 1091.0 - 40.0);
    assert_eq!(t.begin_request(Kind::Read, Some(50.0), 100), 1031.0);
    t.op(Read, 1);
    assert_eq!(t.end_request(), 1101.0 - 50.0);
    // Background work starts after them.
    t.begin_background();
    t.op(Erase, 0);
    t.end_background();
    assert_eq!(
        spans(&t),
        vec![
            (Program, 0, 0, 10.0, 220.0),
            (Program, 1, 0, 20.0, 230.0),
            (Read, 0, 0, 1031.0, 1091.0),
            (Read, 1, 0, 1031.0, 1101.0),
            (Erase, 0, 0, 1101.0, 2101.0),
            (Erase, 1, 0, 1101.0, 2101.0),
        ]
    );
}

#[test]
fn a_transfer_takes_an_earlier_gap_on_its_channel() {
    use FlashOp::*;
    let mut t = timeline(1, 2, 8);
    t.begin_request(Kind::Write, Some(10.0), 100);
    t.op(Program, 0);
    t.end_request();
    // The read waits for die 0 (until 220) and books the channel at 270-280.
    t.begin_request(Kind::Read, Some(11.0), 100);
    t.op(Read, 0);
    t.end_request();
    // The program on die 1 is ready at 12: the channel is free 20-30, before the read's transfer.
    t.begin_request(Kind::Write, Some(12.0), 100);
    t.op(Program, 1);
    assert_eq!(t.end_request(), 230.0 - 12.0);
    assert_eq!(
        spans(&t),
        vec![
            (Program, 0, 0, 10.0, 220.0),
            (Read, 0, 0, 220.0, 280.0),
            (Program, 1, 0, 20.0, 230.0),
        ]
    );
    // A request without flash work (a read of a page never written) completes when it is submitted.
    t.begin_request(Kind::Read, Some(13.0), 100);
    assert_eq!(t.end_request(), 0.0);
}

/// The event model's rules written the plain way, for [`the_timeline_keeps_its_rules_on_a_long_random_run`]:
/// every die's free time, every transfer ever booked on each channel, and an operation's span found from
/// those as the module header says (no transfer forgotten, no fast path). Striped over the dies, no command
/// overhead, spans in the order the operations are issued; with several planes, a die's read or program
/// joins the die's last one as rule 7 says.
struct Reference {
    channels: usize,
    /// Plane-units of the scheme block (page `o`'s die is `o mod dies`, its plane `(o mod units) div dies`,
    /// its offset `(o mod block) div units`) and the block's pages.
    units: u32,
    block: u32,
    die_free: Vec<f64>,
    /// Per die, the multi-plane operation of this request its next operation may join.
    joinable: Vec<Option<Joinable>>,
    /// Operations that joined one.
    joins: usize,
    booked: Vec<Vec<(f64, f64)>>,
    ready: f64,
    last_read_end: f64,
    frontier: f64,
    spans: Vec<(FlashOp, u32, u32, f64, f64)>,
}

/// A multi-plane operation: its kind, page offset and planes, when its array time begins (a read) or when its
/// last transfer ends (a program), and its spans.
#[derive(Clone)]
struct Joinable {
    op: FlashOp,
    offset: u32,
    planes: Vec<u32>,
    start: f64,
    at: f64,
    spans: Vec<usize>,
}

impl Reference {
    fn new(channels: usize, dies: usize, planes: usize) -> Reference {
        Reference {
            channels,
            units: (dies * planes) as u32,
            block: 4 * planes as u32,
            die_free: vec![0.0; dies],
            joinable: vec![None; dies],
            joins: 0,
            booked: vec![Vec::new(); channels],
            ready: 0.0,
            last_read_end: 0.0,
            frontier: 0.0,
            spans: Vec::new(),
        }
    }

    fn begin(&mut self, submitted: f64) {
        (self.ready, self.last_read_end, self.frontier) = (submitted, submitted, submitted);
        self.joinable.fill(None);
    }

    /// The earliest start at or after `ready` of `len` free microseconds on channel `c`, booked.
    fn reserve(&mut self, c: usize, ready: f64, len: f64) -> f64 {
        let booked = &mut self.booked[c];
        let mut at = ready;
        for &(start, end) in booked.iter() {
            if end <= at {
                continue;
            }
            if start >= at + len {
                break;
            }
            at = end;
        }
        booked.push((at, at + len));
        booked.sort_by(|a, b| a.0.total_cmp(&b.0));
        at
    }

    fn op(&mut self, op: FlashOp, ppn: u32) {
        let dies = self.die_free.len() as u32;
        let die = (ppn % dies) as usize;
        let c = die % self.channels;
        let (plane, offset) = (
            ppn % self.block % self.units / dies,
            ppn % self.block / self.units,
        );
        let joinable = self.joinable[die].take();
        if let Some(mut j) =
            joinable.filter(|j| j.op == op && j.offset == offset && !j.planes.contains(&plane))
        {
            // Rule 7: a read's data moves out after the die's last transfer, once the shared array time is
            // over; a program's data moves in after the last plane's, and every plane's array time starts then.
            let (start, end) = if op == FlashOp::Read {
                let out = self.reserve(c, j.at.max(self.die_free[die]), 10.0);
                self.last_read_end = out + 10.0;
                (j.start, out + 10.0)
            } else {
                let ready = j.at.max(self.ready).max(self.last_read_end);
                let start = self.reserve(c, ready, 10.0);
                j.at = start + 10.0;
                (start, j.at + TIMING.program_us)
            };
            // The planes programmed before end with this one; a read's earlier planes end when their data
            // is out.
            if op == FlashOp::Program {
                for &i in &j.spans {
                    self.spans[i].4 = end;
                }
            }
            j.planes.push(plane);
            self.joins += 1;
            j.spans.push(self.spans.len());
            self.occupy(op, die, start, end);
            self.joinable[die] = Some(j);
            return;
        }
        let (page, spare) = (10.0, 1.0);
        let (start, end) = match op {
            FlashOp::Read | FlashOp::SpareRead => {
                let (array, moved) = if op == FlashOp::Read {
                    (TIMING.read_us, page)
                } else {
                    (TIMING.spare_read_us, spare)
                };
                let start = self.die_free[die].max(self.ready);
                let out = self.reserve(c, start + array, moved);
                self.last_read_end = out + moved;
                (start, out + moved)
            }
            FlashOp::Program | FlashOp::SpareProgram => {
                let (array, moved) = if op == FlashOp::Program {
                    (TIMING.program_us, page)
                } else {
                    (TIMING.spare_program_us, spare)
                };
                let ready = self.die_free[die].max(self.ready).max(self.last_read_end);
                let start = self.reserve(c, ready, moved);
                (start, start + moved + array)
            }
            FlashOp::Erase => {
                self.joinable.fill(None);
                let after = self.ready.max(self.frontier);
                for d in 0..self.die_free.len() {
                    let start = self.die_free[d].max(after);
                    self.occupy(op, d, start, start + TIMING.erase_us);
                }
                return;
            }
        };
        if matches!(op, FlashOp::Read | FlashOp::Program) {
            self.joinable[die] = Some(Joinable {
                op,
                offset,
                planes: vec![plane],
                start,
                at: if op == FlashOp::Read {
                    start + TIMING.read_us
                } else {
                    end - TIMING.program_us
                },
                spans: vec![self.spans.len()],
            });
        }
        self.occupy(op, die, start, end);
    }

    fn occupy(&mut self, op: FlashOp, die: usize, start: f64, end: f64) {
        self.die_free[die] = end;
        self.frontier = self.frontier.max(end);
        let channel = (die % self.channels) as u32;
        self.spans.push((op, die as u32, channel, start, end));
    }
}

#[test]
fn the_timeline_keeps_its_rules_on_a_long_random_run() {
    // 2 channels x 2 dies, and 4 dies on one channel (where a transfer must fit among three other dies'),
    // page p on die p mod 4.
    for channels in [2, 1] {
        random_run_against_the_reference(channels, 4 / channels, 1);
    }
}

#[test]
fn multi_plane_operations_keep_the_rules_on_a_long_random_run() {
    // The same with 2 planes a die (scheme blocks of 8 pages a die): programs and reads join (rule 7).
    for channels in [2, 1] {
        random_run_against_the_reference(channels, 4 / channels, 2);
    }
}

/// Requests arriving faster than the dies serve them on `channels` x `dies_per_chip` dies, so that each
/// channel books transfers far ahead and fills gaps: the timeline forgets booked transfers and takes its fast
/// paths, the reference does neither; every span must be the reference's.
fn random_run_against_the_reference(channels: u32, dies_per_chip: u32, planes: u32) {
    let mut t = golden_timeline(channels, dies_per_chip, planes, 16);
    let mut reference = Reference::new(channels as usize, 4, planes as usize);
    let ops = [
        FlashOp::Read,
        FlashOp::Read,
        FlashOp::SpareRead,
        FlashOp::Program,
        FlashOp::Program,
        FlashOp::SpareProgram,
    ];
    let mut next = draws(0x2545_f491_4f6c_dd1d);
    let mut arrival = 0.0;
    for _ in 0..3000 {
        arrival += next(40) as f64;
        let submitted = t.begin_request(Kind::Write, Some(arrival + 1.0), 100);
        reference.begin(submitted);
        // Mostly a page or two; now and then a collection of many copies, or an erase.
        let n = if next(16) == 0 { 24 } else { 1 + next(2) };
        for _ in 0..n {
            let op = if next(64) == 0 {
                FlashOp::Erase
            } else {
                ops[next(ops.len() as u64) as usize]
            };
            let ppn = next(1024) as u32;
            t.op(op, ppn);
            reference.op(op, ppn);
        }
        t.end_request();
    }
    let got = spans(&t);
    assert_eq!(got.len(), reference.spans.len());
    for (i, (a, b)) in got.iter().zip(&reference.spans).enumerate() {
        assert_eq!(a, b, "{channels} channels, operation {i}");
    }
    // With several planes, the reference's rule 7 was exercised.
    assert_eq!(
        reference.joins > 100,
        planes > 1,
        "{} joins",
        reference.joins
    );
}

/// On `dies` dies of one channel, a scheme block of 4 pages (striped over them): a write of block 0, a read
/// of page 1, then a merge that reads the spare areas of block 0 (with `spare_reads`), copies its pages in
/// another order to block 1 and erases block 0; once with the runs in one call, once operation by operation.
fn merge_timed_at_once_and_one_by_one(dies: u32, spare_reads: bool) -> (Timeline, Timeline) {
    use ftlsim_core::addr::Ppn;
    let (mut at_once, mut one_by_one) = (timeline(1, dies, 8), timeline(1, dies, 8));
    let from = [Ppn(3), Ppn(0), Ppn(2), Ppn(1)];
    for (t, run) in [(&mut at_once, true), (&mut one_by_one, false)] {
        t.begin_request(Kind::Write, Some(10.0), 400);
        (0..4).for_each(|p| t.op(FlashOp::Program, p));
        t.end_request();
        t.begin_request(Kind::Read, Some(20.0), 100);
        t.op(FlashOp::Read, 1);
        t.end_request();
        t.begin_request(Kind::Write, Some(30.0), 100);
        if run {
            if spare_reads {
                t.spare_read_run(0, 4);
            }
            t.copy_run(&from, 4, 0);
        } else {
            if spare_reads {
                (0..4).for_each(|p| t.op(FlashOp::SpareRead, p));
            }
            for (i, p) in from.iter().enumerate() {
                t.op(FlashOp::Read, p.0);
                t.op(FlashOp::Program, 4 + i as u32);
            }
        }
        t.op(FlashOp::Erase, 0);
        t.end_request();
    }
    (at_once, one_by_one)
}

#[test]
fn a_run_of_copies_is_timed_as_the_copies_one_by_one() {
    // Two dies: the copies alternate between them, and the first waits for the read on die 1.
    let (mut at_once, one_by_one) = merge_timed_at_once_and_one_by_one(2, false);
    assert_eq!(spans(&at_once), spans(&one_by_one));
    use FlashOp::*;
    // Page 3's copy: read on die 1 once the host read there ends (500), array until 550, transfer until
    // 560; its program on die 0 (page 4) waits for it: transfer 560-570, array until 770.
    assert_eq!(
        spans(&at_once)[5..7],
        [(Read, 1, 0, 500.0, 560.0), (Program, 0, 0, 560.0, 770.0)]
    );
    // A run outside a request or background work is not timed, as an operation is not.
    at_once.copy_run(&[ftlsim_core::addr::Ppn(0)], 8, 0);
    assert_eq!(spans(&at_once).len(), spans(&one_by_one).len());
}

#[test]
fn on_one_die_runs_of_copies_and_spare_reads_are_timed_as_their_operations_one_by_one() {
    // One die (the event model on for a single chip): the runs take the loop of one die.
    let (mut at_once, mut one_by_one) = merge_timed_at_once_and_one_by_one(1, true);
    assert_eq!(spans(&at_once), spans(&one_by_one));
    assert_eq!(spans(&at_once).len(), 4 + 1 + 4 + 8 + 1);
    assert!(
        spans(&at_once).iter().all(|s| s.1 == 0),
        "every operation on the one die"
    );
    let (a, b) = (at_once.figures(), one_by_one.figures());
    assert_eq!(
        (a.write.mean, a.die_utilization, a.channel_utilization),
        (b.write.mean, b.die_utilization, b.channel_utilization)
    );
}

/// Where a long random run's operations go: `dies` partitions of `pages` each (placed per die: a run of
/// copies within one), or one space of `pages` (striped).
struct Pages {
    dies: u64,
    pages: u32,
}

/// Times 3,000 write requests of random runs of copies and spare reads, reads, programs and spare reads on
/// three fresh timelines alike but for spans (`new(true)` keeps them): the runs in one call on two, one of
/// them keeping spans, the other not (the loops a simulation takes), and operation by operation on the third,
/// with requests arriving faster than the dies serve them: the channels book transfers far ahead and reads
/// find gaps among the other dies' transfers. A third of the runs of copies read each page at an offset of
/// the die they program it on (a merge's copies to their own offsets). Checks that all give the same spans
/// where kept and the same figures (every response time and utilization); returns how many copies had their
/// source and target at offsets of one striped die.
fn runs_timed_at_once_and_one_by_one(
    new: impl Fn(bool) -> Timeline,
    Pages { dies, pages }: Pages,
    seed: u64,
    label: &str,
) -> u32 {
    use ftlsim_core::addr::Ppn;
    let (mut at_once, mut bare, mut one_by_one) = (new(true), new(false), new(true));
    let mut next = draws(seed);
    let (mut arrival, mut same_die) = (0.0, 0);
    for _ in 0..3000 {
        arrival += next(30) as f64;
        for t in [&mut at_once, &mut bare, &mut one_by_one] {
            t.begin_request(Kind::Write, Some(arrival + 1.0), 100);
        }
        for _ in 0..1 + next(3) {
            let base = if dies > 1 {
                next(dies) as u32 * pages
            } else {
                0
            };
            let run = next(6);
            if run < 2 {
                let to = next(pages as u64 - 12) as u32;
                let shift = 4 * next(pages as u64 / 4) as u32;
                let from: Vec<Ppn> = (0..1 + next(12) as u32)
                    .map(|i| match run {
                        0 => Ppn(next(pages as u64) as u32),
                        _ => Ppn((to + i + shift) % pages),
                    })
                    .collect();
                at_once.copy_run(&from, to, base);
                bare.copy_run(&from, to, base);
                for (i, p) in from.iter().enumerate() {
                    same_die += u32::from(p.0 % 4 == (to + i as u32) % 4);
                    one_by_one.op(FlashOp::Read, base + p.0);
                    one_by_one.op(FlashOp::Program, base + to + i as u32);
                }
            } else if run == 2 {
                let (first, reads) = (next(pages as u64 - 12) as u32, next(13) as u32);
                at_once.spare_read_run(base + first, reads);
                bare.spare_read_run(base + first, reads);
                for p in first..first + reads {
                    one_by_one.op(FlashOp::SpareRead, base + p);
                }
            } else {
                let op = [FlashOp::Read, FlashOp::Program, FlashOp::SpareRead][next(3) as usize];
                let ppn = base + next(pages as u64) as u32;
                for t in [&mut at_once, &mut bare, &mut one_by_one] {
                    t.op(op, ppn);
                }
            }
        }
        for t in [&mut at_once, &mut bare, &mut one_by_one] {
            t.end_request();
        }
    }
    assert_eq!(spans(&at_once), spans(&one_by_one), "{label}");
    let want = one_by_one.figures();
    assert_eq!(at_once.figures(), want, "{label}, spans kept");
    assert_eq!(bare.figures(), want, "{label}, no spans kept");
    same_die
}

#[test]
fn placed_per_die_runs_of_copies_are_timed_as_their_operations_one_by_one_on_a_long_random_run() {
    // A copy's read finds gaps among the other dies' transfers: some hold its program's transfer too (one
    // booking), some do not (the program searches on). On 2 channels of 2 dies, and on one channel of 4.
    const DIE_PAGES: u32 = 256;
    for channels in [2, 1] {
        let new = |spans| {
            let mut t = inexact_timeline(channels, 4 / channels, spans);
            t.place_per_die(DIE_PAGES);
            t
        };
        let pages = Pages {
            dies: 4,
            pages: DIE_PAGES,
        };
        let label = format!("{channels} channels");
        runs_timed_at_once_and_one_by_one(new, pages, 0x9e37_79b9_7f4a_7c15, &label);
    }
}

#[test]
fn striped_runs_of_copies_are_timed_as_their_operations_one_by_one_on_a_long_random_run() {
    // A scheme block of 4 pages striped over 4 dies: a copy's read and program are on one die when its source
    // and target pages are at offsets of one die (booked as one pair, as an instance per die books them), else
    // on two. On 2 channels of 2 dies, and on one channel of 4 (whose latest transfers are kept apart).
    for channels in [2, 1] {
        let new = |spans| inexact_timeline(channels, 4 / channels, spans);
        let pages = Pages {
            dies: 1,
            pages: 1024,
        };
        let label = format!("{channels} channels");
        let same_die = runs_timed_at_once_and_one_by_one(new, pages, 0x2545_f491_4f6c_dd1d, &label);
        assert!(same_die > 500, "{same_die} copies on one die");
    }
}

#[test]
fn the_queue_depth_counts_every_read_and_write_from_arrival_to_completion_on_a_long_random_run() {
    // Reads, writes and trims (a trim takes a place in the device but not in the count), some with trace
    // times (bursts fill the device, and requests wait in the host), some without (submitted when they can
    // be), and now and then one abandoned by a power cut (it leaves at the end of its last operation so far).
    // The reference: each read or write is in the system from its arrival until it completes or is abandoned.
    let mut t = golden_timeline(2, 2, 1, 4);
    let mut next = draws(0x51_7cc1_b727_220a);
    let (mut last_arrival, mut last_dispatch, mut trace) = (0.0_f64, 0.0_f64, 0.0);
    // (arrival, leave) of every read and write, and the most in the system at an arrival.
    let mut stays: Vec<(f64, f64)> = Vec::new();
    let mut most = 0;
    for _ in 0..4000 {
        let kind = [Kind::Read, Kind::Write, Kind::Write, Kind::Other][next(4) as usize];
        trace += if next(8) == 0 {
            2000.0
        } else {
            next(30) as f64
        };
        let trace_us = if next(3) == 0 { None } else { Some(trace) };
        let dispatch = t.begin_request(kind, trace_us, 100);
        let arrival = match trace_us {
            Some(trace_us) => trace_us.max(last_arrival),
            None => dispatch,
        };
        assert!(dispatch >= arrival && dispatch >= last_dispatch);
        (last_arrival, last_dispatch) = (arrival, dispatch);
        let first_span = t.spans().len();
        for _ in 0..1 + next(3) {
            let op = [FlashOp::Read, FlashOp::Program][next(2) as usize];
            t.op(op, next(64) as u32);
        }
        let leave = if next(50) == 0 {
            t.abandon();
            t.spans()[first_span..]
                .iter()
                .fold(dispatch, |end, s| end.max(s.end))
        } else {
            arrival + t.end_request()
        };
        if kind != Kind::Other {
            let in_system = 1 + stays.iter().filter(|&&(_, left)| left > arrival).count();
            most = most.max(in_system);
            stays.push((arrival, leave));
        }
    }
    let f = t.figures();
    assert_eq!(f.depth_max, most as u64);
    assert!(most > 4, "requests waited in the host: {most}");
    let area: f64 = stays.iter().map(|&(arrival, leave)| leave - arrival).sum();
    assert!(
        (f.depth_mean * f.span_us - area).abs() < 1e-9 * area,
        "{} against {area}",
        f.depth_mean * f.span_us
    );
}
