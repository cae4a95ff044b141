//! Golden tests for DFTL (Gupta, Kim, Urgaonkar, ASPLOS 2009, §3): hand-worked ledgers on a toy device of
//! 4-page blocks, 512 B pages and 256 B entries (2 entries a translation page), so that every CMT miss,
//! dirty eviction and batch update shows in the counts.

mod common;

use common::{page, toy, writes};
use ftlsim_core::request::Op;
use ftlsim_core::sim::run_requests;
use serde_json::json;

#[test]
fn a_dirty_eviction_writes_back_its_translation_page_and_cleans_its_neighbour() {
    // CMT of 2 (protected segment 1); translation page t holds logical pages 2t and 2t + 1.
    let cfg = toy("dftl", json!({"cmt_entries": 2, "entry_bytes": 256}), 4, 2);
    let mut reqs = writes(&[0, 1, 2, 0]);
    reqs.push(page(Op::Read, 1));
    reqs.push(page(Op::Read, 1));
    let r = run_requests(&cfg, reqs).unwrap();
    // W0: miss 1, translation page 0 never written: no read. CMT {0*}.
    // W1: miss 2. CMT {1*, 0*} (probationary, newest first).
    // W2: miss 3, full: victim 0 is dirty -> write back page 0 (never written: no read; one map write),
    //     folding in entry 1 too (batch update): both clean. Page 1 never written: no read. CMT {2*, 1}.
    // W0: miss 4, victim 1 is clean: no write. Read page 0 (map read 1). CMT {0*, 2*}.
    // R1: miss 5, victim 2 dirty -> write back page 1 (map write 2); read page 0 (map read 2). CMT {1, 0*}.
    // R1: hit 1 (promoted to the protected segment).
    assert_eq!(r.count("cache.cmt.misses"), 5);
    assert_eq!(r.count("cache.cmt.hits"), 1);
    assert_eq!(r.count("map.page_reads"), 2);
    assert_eq!(r.count("map.page_writes"), 2);
    assert_eq!(
        r.count("flash.page_writes"),
        4 + 2,
        "4 data pages and 2 translation pages"
    );
    assert_eq!(
        r.count("flash.page_reads"),
        2 + 2,
        "2 host reads and 2 translation reads"
    );
    assert_eq!(r.count("flash.erases"), 0);
}
