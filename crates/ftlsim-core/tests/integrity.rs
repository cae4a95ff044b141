//! The integrity check catches a scheme that loses data, and device-size errors say how to fix them.

mod common;

use common::{page, toy, writes};
use ftlsim_core::addr::{Lpn, Token};
use ftlsim_core::device::Device;
use ftlsim_core::ftl::{Built, Ftl, RamItem};
use ftlsim_core::request::{Op, Request};
use ftlsim_core::sim::{run_custom, run_requests};
use ftlsim_core::SimError;

/// Writes every logical page in place at its own physical page, and "forgets" to erase before an
/// overwrite by writing the update to the block's mirror page only once: the second update of a page is
/// silently dropped. A broken scheme on purpose.
struct Forgetful {
    updated: Vec<bool>,
}

impl Ftl for Forgetful {
    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> ftlsim_core::device::Result<Option<Token>> {
        let ppn = if self.updated[lpn.index()] {
            lpn.0 + 64
        } else {
            lpn.0
        };
        Ok(dev.read(ftlsim_core::addr::Ppn(ppn))?.token)
    }

    fn write(
        &mut self,
        lpn: Lpn,
        token: Token,
        dev: &mut Device,
    ) -> ftlsim_core::device::Result<()> {
        let written = dev
            .chip()
            .peek(ftlsim_core::addr::Ppn(lpn.0))
            .token
            .is_some();
        if !written {
            return dev.program(ftlsim_core::addr::Ppn(lpn.0), token, lpn);
        }
        if !self.updated[lpn.index()] {
            self.updated[lpn.index()] = true;
            return dev.program(ftlsim_core::addr::Ppn(lpn.0 + 64), token, lpn);
        }
        Ok(()) // the bug: a third write of a page is dropped
    }

    fn ram(&self) -> Vec<RamItem> {
        vec![]
    }
}

fn forgetful(g: &ftlsim_core::config::Geometry) -> ftlsim_core::error::Result<Built> {
    Ok(Built {
        ftl: Box::new(Forgetful {
            updated: vec![false; g.logical_pages() as usize],
        }),
        extra_blocks: g.logical_blocks,
    })
}

#[test]
fn a_scheme_that_drops_a_write_is_caught_on_the_next_read() {
    let cfg = toy("forgetful", serde_json::json!({}), 4, 16);
    let mut reqs = writes(&[3, 3]);
    reqs.push(page(Op::Read, 3));
    run_custom(&cfg, forgetful, reqs.clone()).expect("two writes are handled");
    reqs.insert(2, page(Op::Write, 3));
    let err = run_custom(&cfg, forgetful, reqs).unwrap_err();
    match &err {
        SimError::Integrity {
            scheme,
            lpn,
            expected,
            returned,
            ..
        } => {
            assert_eq!(
                (scheme.as_str(), *lpn, expected.as_str(), returned.as_str()),
                ("forgetful", 3, "3", "2")
            );
        }
        other => panic!("expected an integrity error, got {other}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("forgetful") && msg.contains("logical page 3") && msg.contains("token 3"),
        "{msg}"
    );
}

#[test]
fn a_scheme_that_drops_a_write_is_caught_on_a_2x2_array_too() {
    // Two channels of two dies, physical blocks of 2 pages: the timing layer between the chip and the loop
    // leaves the oracle's check of every read in place.
    let mut cfg = toy("forgetful", serde_json::json!({}), 4, 16);
    cfg.device.pages_per_block = Some(2);
    cfg.device.channels = Some(2);
    cfg.device.dies_per_chip = Some(2);
    let reqs = vec![
        page(Op::Write, 3),
        page(Op::Write, 3),
        page(Op::Write, 3),
        page(Op::Read, 3),
    ];
    match run_custom(&cfg, forgetful, reqs).unwrap_err() {
        SimError::Integrity {
            lpn,
            expected,
            returned,
            ..
        } => {
            assert_eq!((lpn, expected.as_str(), returned.as_str()), (3, "3", "2"))
        }
        other => panic!("expected an integrity error, got {other}"),
    }
}

#[test]
fn reading_a_page_never_written_must_return_nothing() {
    let cfg = toy("page", serde_json::json!({}), 4, 16);
    let r = run_requests(&cfg, vec![page(Op::Read, 9)]).unwrap();
    assert_eq!(r.count("flash.page_reads"), 0);
}

#[test]
fn a_request_beyond_the_capacity_says_offset_capacity_and_fix() {
    let cfg = toy("page", serde_json::json!({}), 4, 16);
    let err = run_requests(&cfg, vec![Request::new(0.0, Op::Write, 32 * 1024, 4096)])
        .unwrap_err()
        .to_string();
    // The request's end in bytes, the capacity as a size one would give.
    assert!(
        err.contains("36,864") && err.contains("capacity=32KiB") && err.contains("wrap=true"),
        "{err}"
    );
    let mut wrapping = cfg.clone();
    wrapping.wrap = true;
    let r = run_requests(
        &wrapping,
        vec![
            Request::new(0.0, Op::Write, 32 * 1024 + 512, 512),
            page(Op::Read, 1),
        ],
    )
    .unwrap();
    assert_eq!(
        r.count("flash.page_reads"),
        1,
        "the wrapped write landed on logical page 1"
    );
}

#[test]
fn partial_page_writes_read_the_old_page_first() {
    let cfg = toy("page", serde_json::json!({}), 4, 16);
    let reqs = vec![
        Request::new(0.0, Op::Write, 0, 1024),
        Request::new(0.0, Op::Write, 256, 512),
    ];
    let r = run_requests(&cfg, reqs).unwrap();
    assert_eq!(r.count("host.rmw_page_reads"), 2);
    assert_eq!(r.count("flash.page_reads"), 2);
    assert_eq!(r.count("host.write_pages"), 4);
}

#[test]
fn trimmed_pages_may_read_as_old_data_or_nothing() {
    let cfg = toy("block", serde_json::json!({}), 4, 16);
    let reqs = vec![page(Op::Write, 5), page(Op::Trim, 5), page(Op::Read, 5)];
    run_requests(&cfg, reqs.clone()).unwrap();
    run_requests(&toy("page", serde_json::json!({}), 4, 16), reqs).unwrap();
}

#[test]
fn latency_is_the_flash_time_charged_to_each_request() {
    // lee2007: 200 us a page program. Three one-page writes and one two-page write on the block baseline,
    // into erased pages: 200, 200, 200 and 400 us; the read of one page costs 15 us.
    let cfg = toy("block", serde_json::json!({}), 4, 16);
    let mut reqs = writes(&[0, 1, 2]);
    reqs.push(Request::new(0.0, Op::Write, 8 * 512, 1024));
    reqs.push(page(Op::Read, 0));
    let r = run_requests(&cfg, reqs).unwrap();
    assert_eq!(r.num("latency_us.write.mean"), 250.0);
    assert_eq!(r.num("latency_us.write.max"), 400.0);
    assert_eq!(r.num("latency_us.write.p50"), 200.0);
    assert_eq!(r.num("latency_us.write.p99"), 400.0);
    assert_eq!(r.num("latency_us.read.mean"), 15.0);
    assert_eq!(r.num("time_us.per_write_page"), 1000.0 / 5.0);
    assert_eq!(r.num("time_us.per_read_page"), 15.0);
    assert_eq!(r.num("time_us.total"), 5.0 * 200.0 + 15.0);
}
