//! Golden tests for the tiny-RAM schemes (TinyFTL paper, Lee et al., §V-VI): RAM figures of Tables I and IV
//! on the paper's 16 GB MLC device, and hand-worked small cases.

mod common;

use common::{full, toy, writes};
use ftlsim_core::config::DeviceSpec;
use ftlsim_core::ftl::{self, RamItem};
use ftlsim_core::request::{Op, Request};
use ftlsim_core::sim::{ram, run_requests, SimConfig};
use serde_json::json;

fn paper_ram(scheme: &str, params: serde_json::Value) -> Vec<RamItem> {
    ram(&SimConfig {
        ftl: scheme.into(),
        params,
        preset: Some("tinyftl-16g".into()),
        ..Default::default()
    })
    .unwrap()
}

fn bytes(items: &[RamItem]) -> Vec<u64> {
    items.iter().map(|i| i.bytes).collect()
}

#[test]
fn tinyftl_16g_preset_is_the_papers_device() {
    // §V.E: 64,000 host blocks of 128 x 2 KB pages; with TinyFTL's 1,536 non-data blocks the chip has 65,536.
    let spec = DeviceSpec::resolve(Some("tinyftl-16g"), &Default::default()).unwrap();
    let g = spec.geometry(spec.preset_capacity_bytes.unwrap()).unwrap();
    assert_eq!(
        (
            g.logical_blocks,
            g.page_bytes,
            g.spare_bytes,
            g.pages_per_block
        ),
        (64_000, 2048, 64, 128)
    );
    assert!(g.sequential_program);
    assert_eq!(spec.timing.read_us, 112.8);
    assert_eq!(spec.timing.spare_read_us, 61.6);
    assert_eq!(spec.timing.program_us, 852.8);
    assert_eq!(spec.timing.erase_us, 1500.0);
    let built = ftl::build("tiny", &json!({}), &g).unwrap();
    assert_eq!(built.extra_blocks, 1_536);
}

#[test]
fn table_i_tinyftl_needs_12195_bytes() {
    // Table I: block directory 256 x 3 = 768; block table cache 8 x (768 + 1 + 2) + 2 + 1 = 6,171;
    // page mapping cache 128 x (24 + 5 + 2) + 2 = 3,970; log block list ceil((393 x 26 + 18) / 8) = 1,280;
    // reserved free blocks 3 x 2 = 6.
    let items = paper_ram("tiny", json!({}));
    assert_eq!(
        items.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(),
        [
            "block_directory",
            "block_table_cache",
            "page_mapping_cache",
            "log_block_list",
            "reserved_free_blocks"
        ]
    );
    assert_eq!(bytes(&items), [768, 6_171, 3_970, 1_280, 6]);
    assert_eq!(bytes(&items).iter().sum::<u64>(), 12_195);
    // §VI.D: a block table cache unit is 768 B of table (+3 B tag and pointers): 64 units -> 49,347 B.
    let big = paper_ram("tiny", json!({"block_table_cache_units": 64}));
    assert_eq!(big[1].bytes, 64 * 771 + 2 + 8);
}

#[test]
fn table_iv_logblock_and_zoned() {
    // Logblock = `bast` with 393 log blocks on the paper's chip of 65,536 blocks:
    // 65,536 x 2 B + 393 x 128 x 3 B = 131,072 + 150,912 = 281,984.
    let lb = paper_ram("bast", json!({"log_blocks": 393}));
    assert_eq!(bytes(&lb), [131_072, 150_912]);
    assert_eq!(lb.iter().map(|i| i.bytes).sum::<u64>(), 281_984);
    // Logblock-zoned: the loaded zone's map, 6,144 x 2 B = 12,288 (Table IV's figure), and the log blocks'
    // page maps the paper's figure leaves out.
    let zoned = paper_ram("logblock-zoned", json!({"log_blocks": 393}));
    assert_eq!(zoned[0].name, "zone_block_map");
    assert_eq!(bytes(&zoned), [12_288, 150_912]);
}

#[test]
fn page_mapped_baseline_needs_at_least_24_mb() {
    // §III: "at least 24 MB": 8,192,000 logical pages x 3 B = 24,576,000.
    assert_eq!(paper_ram("page", json!({}))[0].bytes, 24_576_000);
}

#[test]
fn cache_size_parameters_are_range_checked() {
    for (params, what) in [
        (
            json!({"block_table_cache_units": 0}),
            "block_table_cache_units=0",
        ),
        (
            json!({"block_table_cache_units": 65}),
            "block_table_cache_units=65",
        ),
        (
            json!({"page_table_cache_entries": 7}),
            "page_table_cache_entries=7",
        ),
        (
            json!({"page_table_cache_entries": 513}),
            "page_table_cache_entries=513",
        ),
    ] {
        let err = ram(&SimConfig {
            ftl: "tiny".into(),
            params,
            preset: Some("tinyftl-16g".into()),
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains(what), "{err}");
    }
}

#[test]
fn a_write_without_a_log_block_takes_one_and_running_out_compacts_the_lru_one() {
    // Toy device: 4 blocks of 4 pages, full. One log block (clamped: min(393, 4 / 2) = 2, asked for 1).
    let cfg = full(toy("tiny", json!({"log_blocks": 1}), 4, 4));
    // lpn 0: block 0's data block is full and it has no log block -> it takes the only one; one program.
    // At the end of the trace the block table dirtied by preconditioning is flushed with the directory.
    let r = run_requests(&cfg, writes(&[0])).unwrap();
    assert_eq!(
        (
            r.count("flash.page_writes"),
            r.count("flash.erases"),
            r.count("merges.total")
        ),
        (1 + 2, 0, 0)
    );
    assert_eq!(r.count("map.page_writes"), 2);
    // lpn 0 then lpn 4: block 1 needs a log block, none is left -> block 0's (the LRU one) is compacted:
    // its 4 valid pages (3 in the data block, 1 in the log) copied to a free block, data and log erased.
    // Then the write goes to the freed log block. Map: the dirty block table and the directory (2 writes).
    let r = run_requests(&cfg, writes(&[0, 4])).unwrap();
    assert_eq!(r.count("merges.full"), 1);
    assert_eq!(r.count("merges.full.copied_pages"), 4);
    assert_eq!(r.count("merges.full.erases"), 2);
    assert_eq!(r.count("flash.erases"), 2);
    assert_eq!(r.count("flash.page_writes"), 2 + 4 + 2);
    assert_eq!(r.count("map.page_writes"), 2);
    assert_eq!(r.count("log_utilization.replacements"), 1);
    // Rewriting a whole block in order fills its log block with every valid page: a switch, one erase.
    let r = run_requests(&cfg, writes(&[0, 1, 2, 3, 4])).unwrap();
    assert_eq!(
        (
            r.count("merges.switch"),
            r.count("merges.switch.erases"),
            r.count("merges.full")
        ),
        (1, 1, 0)
    );
}

#[test]
fn a_block_table_cache_miss_costs_one_map_page_read() {
    // One-entry block tables, one cache unit, empty device.
    let cfg = toy(
        "tiny",
        json!({"block_table_entries": 1, "block_table_cache_units": 1}),
        4,
        4,
    );
    // lpn 0: table 0 misses, never written -> no read; lbn 0 gets a data block, table 0 dirty.
    // lpn 4: table 1 misses; dirty table 0 is written back (map write 1); table 1 dirty.
    // lpn 1: table 0 misses; dirty table 1 written back (map write 2); table 0 read (map read 1).
    let r = run_requests(&cfg, writes(&[0, 4, 1])).unwrap();
    assert_eq!(r.count("cache.block_table_cache.misses"), 3);
    assert_eq!(r.count("cache.block_table_cache.hits"), 0);
    assert_eq!(r.count("map.page_reads"), 1);
    assert_eq!(r.count("map.page_writes"), 2);
    assert_eq!(r.count("flash.page_writes"), 3 + 2);
}

#[test]
fn a_page_mapping_cache_miss_reads_the_spare_copies_of_directory_and_table() {
    // Page tables of 2 entries, 8 cache entries, 4-page blocks: tables (lbn, 0..2).
    let cfg = toy(
        "tiny",
        json!({"page_table_entries": 2, "page_table_cache_entries": 8}),
        4,
        16,
    );
    // Writes to lpns 0 and 2 (block 0, tables 0 and 1): cold misses with nothing on flash, no reads.
    // Then 8 other tables (blocks 1..4, 2 tables each, written at lpns 4,6,...,18) evict both.
    // The second table of each of the 5 blocks misses with the block's directory on flash (in the spare of
    // the block's first write) but the table not: 1 spare read each.
    // Reading lpn 0 misses: directory copy at lpn 2's page, table 0's copy at lpn 0's page: 2 spare reads.
    let mut reqs = writes(&[0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
    reqs.push(common::page(ftlsim_core::request::Op::Read, 0));
    let r = run_requests(&cfg, reqs).unwrap();
    assert_eq!(r.count("cache.page_map_cache.misses"), 11);
    assert_eq!(r.count("map.spare_reads"), 5 + 2);
}

#[test]
fn table_iv_superblock_needs_198176_bytes() {
    // §VI.B: 65,536 x 3 B block map = 196,608 and 16 cache entries = 1,568 (98 B each: 32 x 3 B + 2 B).
    let items = paper_ram("superblock", json!({}));
    assert_eq!(bytes(&items), [196_608, 1_568]);
    assert_eq!(bytes(&items).iter().sum::<u64>(), 198_176);
}

#[test]
fn superblock_collects_inside_itself_then_reclaims_from_another() {
    // 4 blocks of 4 pages, superblocks of 2 blocks, 1 log block: extra max(5 - 4, 1 + 1) = 2, chip of 6.
    // Full: superblock 0 holds blocks 0 (lpn 0-3) and 1 (lpn 4-7); superblock 1 blocks 2 and 3; free 4, 5.
    let cfg = full(toy(
        "superblock",
        json!({"superblock_blocks": 2, "log_blocks": 1}),
        4,
        4,
    ));
    // lpn 0-3: block 1 full, a free block is left beyond the reserve -> block 4 takes them; block 0 is stale.
    // lpn 0: block 4 full, one free block (the reserve) -> collect block 0 (0 valid): one erase, no copy;
    //        then block 5 takes the write. Superblock 0 holds 1 (4 valid), 4 (3), 5 (1).
    // lpn 8: superblock 1's blocks are full and all valid, the free block 0 is the reserve -> reclaim
    //        superblock 0: blocks 5 and 4 (not wholly valid) copied, 1 + 3 pages, into block 0; both erased.
    //        Block 5 takes the write.
    let r = run_requests(&cfg, writes(&[0, 1, 2, 3, 0, 8])).unwrap();
    assert_eq!(r.count("gc.runs"), 1);
    assert_eq!(r.count("gc.copied_pages"), 0);
    assert_eq!(
        (
            r.count("merges.full"),
            r.count("merges.full.copied_pages"),
            r.count("merges.full.erases")
        ),
        (1, 4, 2)
    );
    assert_eq!(r.count("flash.erases"), 3);
    assert_eq!(r.count("flash.page_writes"), 6 + 4);
}

#[test]
fn zone_switching_costs_the_zone_maps_page_writes_and_reads() {
    // On the paper's device a zone of 6,144 blocks has a 6,144 x 2 B = 12 KB map: 6 pages of 2 KB.
    assert_eq!(
        ftlsim_core::ftl::common::mechanisms::zone_map::ZoneMap::pages_per_zone(6_144, 2, 2_048),
        6
    );
    // A toy device of 2,048 blocks of 4 x 512 B pages in zones of 1,024 blocks: a chip of a little over
    // 2,048 blocks needs 2 B block numbers, so a zone map is 2 KB, 4 pages.
    let cfg = SimConfig {
        ftl: "logblock-zoned".into(),
        params: json!({"zone_blocks": 1024, "log_blocks": 2}),
        device: ftlsim_core::config::DeviceOverrides {
            pages_per_block: Some(4),
            ..Default::default()
        },
        capacity: Some("4MiB".into()),
        ..Default::default()
    };
    let lpn = |lbn: u64, o: u64| Request::new(0.0, Op::Write, (lbn * 4 + o) * 512, 512);
    let reqs = vec![
        lpn(0, 0), // enter zone 0: nothing to flush or load yet; block 0 gets a data block (zone 0 changed)
        lpn(1024, 0), // switch: flush zone 0 (4 map writes); zone 1 was never written (no read); changed
        lpn(0, 1), // switch: flush zone 1 (4 writes), load zone 0 (4 reads); in place, map unchanged
        Request::new(0.0, Op::Read, 0, 512), // zone 0 is loaded: a hit
    ];
    let r = run_requests(&cfg, reqs).unwrap();
    assert_eq!(
        (r.count("map.page_writes"), r.count("map.page_reads")),
        (8, 4)
    );
    assert_eq!(
        (r.count("cache.zone.hits"), r.count("cache.zone.misses")),
        (1, 3)
    );
    assert_eq!(r.count("flash.page_writes"), 3 + 8);
    // Each switch was charged to its request: 4 x 200 us flush (+ 4 x 15 us load) on top of a 200 us write.
    assert_eq!(
        r.num("latency_us.write.max"),
        200.0 + 4.0 * 200.0 + 4.0 * 15.0
    );
}
