//! Golden timelines of multi-plane operations (rule 7 of `array/timeline.rs`), worked by hand: a read or
//! program that follows its die's last operation in the same request, of the same kind, on another plane at
//! the same page offset, shares that operation's array time.
//!
//! The device of `array_timeline.rs`: 100 B pages over a channel of 10 MT/s x 1 byte (a page moves in
//! 10 us), no command overhead; read 50 us, program 200 us, erase 1,000 us.

mod common;

use common::{golden_timeline, span_tuples as spans};
use ftlsim_core::array::{FlashOp, Kind, Timeline};
use FlashOp::*;

/// One request at `arrival` of `ops` on the given pages; its response time.
fn request(t: &mut Timeline, kind: Kind, arrival: f64, ops: &[(FlashOp, u32)]) -> f64 {
    t.begin_request(kind, Some(arrival), 100 * ops.len() as u64);
    for &(op, ppn) in ops {
        t.op(op, ppn);
    }
    t.end_request()
}

#[test]
fn one_die_of_two_planes_programs_and_reads_both_planes_at_once() {
    // One die of 2 planes, scheme blocks of 8 pages: page o on plane o mod 2 at offset o div 2.
    let mut t = golden_timeline(1, 1, 2, 8);
    let responses = [
        // Pages 0 and 1: planes 0 and 1 at offset 0, one multi-plane program.
        request(&mut t, Kind::Write, 10.0, &[(Program, 0), (Program, 1)]),
        // Pages 2 and 3 (offset 1): one multi-plane read.
        request(&mut t, Kind::Read, 15.0, &[(Read, 2), (Read, 3)]),
        // Pages 4 and 6 are on plane 0 both (offsets 2 and 3): one after the other; page 7 (plane 1,
        // offset 3) joins page 6.
        request(
            &mut t,
            Kind::Write,
            20.0,
            &[(Program, 4), (Program, 6), (Program, 7)],
        ),
    ];
    assert_eq!(
        spans(&t),
        vec![
            // Page 0 moves 10-20, page 1 20-30; the array programs both 30-230.
            (Program, 0, 0, 10.0, 230.0),
            (Program, 0, 0, 20.0, 230.0),
            // Both planes read 230-280; page 2 moves out 280-290, page 3 290-300.
            (Read, 0, 0, 230.0, 290.0),
            (Read, 0, 0, 230.0, 300.0),
            // Page 4 alone: 300-310 then 310-510; page 6 510-520, page 7 520-530, both program 530-730.
            (Program, 0, 0, 300.0, 510.0),
            (Program, 0, 0, 510.0, 730.0),
            (Program, 0, 0, 520.0, 730.0),
        ]
    );
    assert_eq!(responses, [220.0, 285.0, 710.0]);
    let f = t.figures();
    // The die is busy from 10 to 730 without a gap: 220 + 70 + 210 + 220 us.
    assert_eq!(f.span_us, 720.0);
    assert!((f.die_utilization.0 - 1.0).abs() < 1e-12);
    // Seven pages over the channel.
    assert!((f.channel_utilization.0 - 70.0 / 720.0).abs() < 1e-12);
}

#[test]
fn planes_join_only_within_a_request_and_never_after_another_operation_on_the_die() {
    let mut t = golden_timeline(1, 1, 2, 8);
    // Page 0, then page 1 in the next request: not joined, page 1 waits for the die.
    request(&mut t, Kind::Write, 10.0, &[(Program, 0)]);
    request(&mut t, Kind::Write, 11.0, &[(Program, 1)]);
    // A read of page 2, a spare read of page 0 on the die, a read of page 3: the spare read closes the read.
    request(
        &mut t,
        Kind::Read,
        12.0,
        &[(Read, 2), (SpareRead, 0), (Read, 3)],
    );
    // A program then a read at the same offset on the other plane: different kinds, not joined.
    request(&mut t, Kind::Write, 13.0, &[(Program, 4), (Read, 5)]);
    assert_eq!(
        spans(&t),
        vec![
            (Program, 0, 0, 10.0, 220.0),
            (Program, 0, 0, 220.0, 430.0),
            (Read, 0, 0, 430.0, 490.0),
            // The spare read: 20 us on the die, its 1 us out.
            (SpareRead, 0, 0, 490.0, 511.0),
            (Read, 0, 0, 511.0, 571.0),
            (Program, 0, 0, 571.0, 781.0),
            (Read, 0, 0, 781.0, 841.0),
        ]
    );
}

#[test]
fn striped_over_two_dies_of_two_planes_each_die_joins_its_own_planes() {
    // 2 dies of 2 planes, scheme blocks of 8 pages: page o on unit o mod 4, die (o mod 4) mod 2, plane
    // (o mod 4) div 2, offset o div 4. A write of pages 0-3: die 0 gets pages 0 and 2, die 1 pages 1 and 3.
    let mut t = golden_timeline(1, 2, 2, 8);
    let response = request(
        &mut t,
        Kind::Write,
        10.0,
        &[(Program, 0), (Program, 1), (Program, 2), (Program, 3)],
    );
    assert_eq!(
        spans(&t),
        vec![
            // The channel moves pages 0, 1, 2, 3 at 10, 20, 30, 40; die 0 programs 0 and 2 from 40, die 1
            // programs 1 and 3 from 50.
            (Program, 0, 0, 10.0, 240.0),
            (Program, 1, 0, 20.0, 250.0),
            (Program, 0, 0, 30.0, 240.0),
            (Program, 1, 0, 40.0, 250.0),
        ]
    );
    assert_eq!(response, 240.0);
    // An erase closes the request's multi-plane operations: page 10 does not join page 8 across it; pages
    // 12 and 14 (die 0, planes 0 and 1, offset 1) make a new pair.
    request(
        &mut t,
        Kind::Write,
        300.0,
        &[
            (Program, 8),
            (Erase, 0),
            (Program, 10),
            (Program, 12),
            (Program, 14),
        ],
    );
    let after: Vec<_> = spans(&t)[4..].to_vec();
    assert_eq!(
        after,
        vec![
            // Page 8 (die 0, plane 0, offset 0 of block 1) 300-310, 310-510.
            (Program, 0, 0, 300.0, 510.0),
            // The erase of block 0 on both dies after it.
            (Erase, 0, 0, 510.0, 1510.0),
            (Erase, 1, 0, 510.0, 1510.0),
            // Page 10 (die 0, plane 1, offset 0): not joined to page 8 across the erase: 1510-1520 then
            // 1520-1720. Pages 12 and 14 (die 0, planes 0 and 1, offset 1) join: 1720-1730, 1730-1740,
            // both program 1740-1940.
            (Program, 0, 0, 1510.0, 1720.0),
            (Program, 0, 0, 1720.0, 1940.0),
            (Program, 0, 0, 1730.0, 1940.0),
        ]
    );
}

#[test]
fn per_die_a_dies_block_spans_its_planes() {
    // Placed per die on 2 dies of 2 planes: die d holds pages 8d to 8d + 7, a block of 8 pages, page o of a
    // block on plane o mod 2 at offset o div 2. Pages 8 and 9 (die 1, offset 0) join.
    let mut t = golden_timeline(1, 2, 2, 8);
    t.place_per_die(8);
    request(&mut t, Kind::Write, 10.0, &[(Program, 8), (Program, 9)]);
    assert_eq!(
        spans(&t),
        vec![(Program, 1, 0, 10.0, 230.0), (Program, 1, 0, 20.0, 230.0)]
    );
}
