//! The FAT model (`trace/workloads/fat.rs`): layout against the Microsoft FAT specification (fatgen103), files read
//! back by walking the FAT chain, and the hot write references of the `fat-*` workloads (003 §5.1).

use ftlsim_core::request::{Op, Request, Tag};
use ftlsim_core::trace::workloads::fat::{Align, Allocation, FatFs, Layout, ROOT, SECTOR};
use ftlsim_core::trace::workloads::workload::parse_spec;
use ftlsim_core::trace::RequestSource;

#[test]
fn fat16_layout_of_a_32_mib_volume() {
    // fatgen103: 32 MiB = 65,536 sectors -> FAT16 (below 512 MiB), DskTableFAT16 gives 4 sectors a cluster
    // (32,681..262,144 sectors). Reserved 1, root 512 entries x 32 B = 32 sectors.
    // FATSz = ceil((65,536 - 1 - 32) / (256 x 4 + 2)) = ceil(65,503 / 1,026) = 64 (63 x 1,026 = 64,638).
    // FAT1 at 1, FAT2 at 1 + 64 = 65, root at 65 + 64 = 129, first data sector 129 + 32 = 161,
    // clusters = (65,536 - 161) / 4 = 16,343 (FAT16: 4,085..65,524).
    let l = Layout::new(32 << 20, None, None).unwrap();
    assert_eq!(
        (l.fat_bits, l.sectors_per_cluster, l.fat_sectors),
        (16, 4, 64)
    );
    assert_eq!((l.fat_sector(0), l.fat_sector(1)), (1, 65));
    assert_eq!((l.root_dir_sector(), l.first_data_sector()), (129, 161));
    assert_eq!(l.clusters, 16_343);
    assert_eq!(l.cluster_sector(2), 161);
}

#[test]
fn fat32_layouts_of_256_mib_and_1_gib_volumes() {
    // 256 MiB forced to FAT32: 524,288 sectors, DskTableFAT32 gives 1 sector a cluster (up to 532,480).
    // Reserved 32, no root region. FATSz = ceil((524,288 - 32) / ((256 x 1 + 2) / 2)) = ceil(524,256 / 129)
    // = 4,064 (exactly). FAT1 at 32, FAT2 at 4,096, cluster 2 (the root) at 8,160;
    // clusters = 524,288 - 8,160 = 516,128.
    let l = Layout::new(256 << 20, Some(32), None).unwrap();
    assert_eq!(
        (l.fat_bits, l.sectors_per_cluster, l.fat_sectors),
        (32, 1, 4064)
    );
    assert_eq!(
        (l.fat_sector(0), l.fat_sector(1), l.first_data_sector()),
        (32, 4096, 8160)
    );
    assert_eq!(l.clusters, 516_128);
    // 1 GiB: FAT32 by default (512 MiB and up), 8 sectors a cluster (up to 16,777,216 sectors).
    // FATSz = ceil((2,097,152 - 32) / ((256 x 8 + 2) / 2)) = ceil(2,097,120 / 1,025) = 2,046
    // (2,045 x 1,025 = 2,096,125). FAT2 at 32 + 2,046 = 2,078, data at 2,078 + 2,046 = 4,124,
    // clusters = (2,097,152 - 4,124) / 8 = 261,628.
    let l = Layout::new(1 << 30, None, None).unwrap();
    assert_eq!(
        (l.fat_bits, l.sectors_per_cluster, l.fat_sectors),
        (32, 8, 2046)
    );
    assert_eq!(
        (l.fat_sector(1), l.first_data_sector(), l.clusters),
        (2078, 4124, 261_628)
    );
}

/// The sectors of a file, from its first cluster through the FAT chain.
fn walk(fs: &FatFs, file: u32) -> Vec<u64> {
    let l = fs.layout;
    let mut sectors = Vec::new();
    let mut c = fs.first_cluster(file);
    while !FatFs::is_end_of_chain(c) {
        let first = l.cluster_sector(c);
        sectors.extend(first..first + l.sectors_per_cluster as u64);
        c = fs.fat_entry(c);
    }
    sectors
}

fn sectors_of(requests: &[Request], tag: Tag) -> Vec<u64> {
    requests
        .iter()
        .filter(|r| r.op == Op::Write && r.tag == tag)
        .flat_map(|r| r.offset / SECTOR..(r.offset + r.len) / SECTOR)
        .collect()
}

#[test]
fn a_file_written_through_the_model_reads_back_along_its_fat_chain() {
    for (bytes, fat) in [(32u64 << 20, None), (256 << 20, Some(32))] {
        let mut fs = FatFs::new(Layout::new(bytes, fat, None).unwrap(), true, 1);
        // A file in between two others, so that after a delete the next file's chain is not contiguous.
        let a = fs.create(ROOT).unwrap();
        let b = fs.create(ROOT).unwrap();
        for i in 0..6 {
            fs.write(a, i * 512, 512).unwrap();
            fs.write(b, i * 512, 512).unwrap();
        }
        fs.delete(a);
        fs.out.clear();
        let c = fs.create(ROOT).unwrap();
        let size = 37 * 512 + 100;
        for i in 0..38 {
            fs.write(c, i * 512, (size - i * 512).min(512)).unwrap();
        }
        let out: Vec<Request> = fs.out.drain(..).collect();
        let data = sectors_of(&out, Tag::Data);
        let chain = walk(&fs, c);
        // The data went exactly where the chain says, in file order, and the chain is as long as the file.
        assert_eq!(data, chain[..38].to_vec(), "{bytes}");
        assert_eq!(
            chain.len() as u64,
            size.div_ceil(fs.layout.cluster_bytes()) * fs.layout.sectors_per_cluster as u64
        );
        // First-free allocation: the file reuses the clusters `a` freed before any new one.
        assert_eq!(fs.first_cluster(c), if fat.is_some() { 3 } else { 2 });
        // Metadata is the FAT (both copies) and directory sectors only, never a data sector of the file.
        let l = fs.layout;
        for s in sectors_of(&out, Tag::Metadata) {
            let in_fat = s >= l.fat_sector(0) && s < l.fat_sector(2);
            let in_dir = if l.fat_bits == 16 {
                s >= l.root_dir_sector() && s < l.first_data_sector()
            } else {
                s == l.cluster_sector(2)
            };
            assert!(in_fat || in_dir, "metadata sector {s}");
        }
        assert_eq!(fs.size(c), size);
    }
}

/// Share of write requests that go to the hottest `fraction` of the logical blocks (16 KiB, lee2007).
fn concentration(spec: &str, capacity: u64, fraction: f64) -> (f64, usize) {
    let mut g = parse_spec(spec)
        .unwrap()
        .unwrap()
        .build(capacity, 512)
        .unwrap();
    let blocks = (capacity / 16384) as usize;
    let mut counts = vec![0u64; blocks];
    let mut writes = 0;
    while let Some(r) = g.next_request() {
        let r = r.unwrap();
        assert!(r.offset + r.len <= capacity);
        if r.op == Op::Write {
            counts[(r.offset / 16384) as usize] += 1;
            writes += 1;
        }
    }
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let hot = ((blocks as f64 * fraction) as usize).max(1);
    (
        counts[..hot].iter().sum::<u64>() as f64 / writes as f64,
        writes,
    )
}

#[test]
fn synchronous_fat_workloads_send_most_writes_to_under_one_percent_of_the_blocks() {
    // 003 §5.1: 60% of Camera-MS500's writes go to 0.2% of the blocks, 56.9% of PostMark's to 0.3%.
    let cap = 32 << 20;
    let (camera, n) = concentration("fat-camera:seed=1", cap, 0.01);
    let (camera_async, _) = concentration("fat-camera:seed=1,sync=false", cap, 0.01);
    let (camera_02, _) = concentration("fat-camera:seed=1", cap, 0.002);
    println!("fat-camera: {n} writes, {camera:.3} to 1% of blocks, {camera_02:.3} to 0.2%; sync=false {camera_async:.3}");
    assert!(camera > 0.5, "{camera}");
    assert!(camera_async < camera - 0.2, "{camera_async} vs {camera}");
    let (postmark, n) = concentration("fat-postmark:seed=1,transactions=2000", cap, 0.01);
    let (postmark_03, _) = concentration("fat-postmark:seed=1,transactions=2000", cap, 0.003);
    let (postmark_async, _) = concentration(
        "fat-postmark:seed=1,transactions=2000,sync=false",
        cap,
        0.01,
    );
    println!(
        "fat-postmark: {n} writes, {postmark:.3} to 1% of blocks, {postmark_03:.3} to 0.3%; sync=false {postmark_async:.3}"
    );
    assert!(postmark > 0.5, "{postmark}");
    assert!(
        postmark_async < postmark - 0.2,
        "{postmark_async} vs {postmark}"
    );
}

#[test]
fn fat_workloads_are_deterministic_by_seed_and_tagged() {
    let drain = |spec: &str| {
        let mut g = parse_spec(spec)
            .unwrap()
            .unwrap()
            .build(64 << 20, 512)
            .unwrap();
        std::iter::from_fn(|| g.next_request())
            .map(Result::unwrap)
            .collect::<Vec<_>>()
    };
    let a = drain("fat-copydelete:seed=3,copies=12,file_mb=1.9");
    assert_eq!(a, drain("fat-copydelete:seed=3,copies=12,file_mb=1.9"));
    assert_ne!(a, drain("fat-copydelete:seed=4,copies=12,file_mb=1.9"));
    assert!(a.iter().all(|r| r.tag != Tag::None));
    assert!(a.iter().any(|r| r.tag == Tag::Metadata) && a.iter().any(|r| r.tag == Tag::Data));
    let e = parse_spec("fat-camera:volume=1GiB")
        .unwrap()
        .unwrap()
        .build(64 << 20, 512)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("volume") && e.contains("capacity"), "{e}");
}

#[test]
fn align_pads_the_reserved_region_so_data_starts_where_asked() {
    // 32 MiB FAT16 (layout above): first data sector 161. lee2007 blocks are 32 sectors (16 KiB).
    // align=block: pad = (32 - 161 mod 32) mod 32 = 31 -> reserved 1 + 31 = 32, data at 192 = 6 x 32,
    // clusters = (65,536 - 192) / 4 = 16,336. FATs and root move with the reserved region.
    let spec = Layout::new(32 << 20, None, None).unwrap();
    assert_eq!(spec.aligned(Align::Spec, 32).unwrap(), spec);
    let l = spec.aligned(Align::parse("block").unwrap(), 32).unwrap();
    assert_eq!((l.reserved_sectors, l.fat_sectors), (32, 64));
    assert_eq!(
        (l.fat_sector(0), l.fat_sector(1), l.root_dir_sector()),
        (32, 96, 160)
    );
    assert_eq!((l.first_data_sector(), l.clusters), (192, 16_336));
    // align=5: pad = (5 + 32 - 1) mod 32 = 4 -> data at 165 (5 sectors into block 5),
    // clusters = (65,536 - 165) / 4 = 16,342 (65,371 / 4 = 16,342.75).
    let l = spec.aligned(Align::parse("5").unwrap(), 32).unwrap();
    assert_eq!(
        (l.reserved_sectors, l.first_data_sector(), l.clusters),
        (5, 165, 16_342)
    );
    // 1 GiB FAT32 (data at 4,124) on 128 KiB blocks (256 sectors): 4,124 mod 256 = 28, pad 228 ->
    // reserved 32 + 228 = 260, data at 4,352 = 17 x 256, clusters = (2,097,152 - 4,352) / 8 = 261,600.
    let l = Layout::new(1 << 30, None, None)
        .unwrap()
        .aligned(Align::Offset(0), 256)
        .unwrap();
    assert_eq!(
        (l.reserved_sectors, l.first_data_sector(), l.clusters),
        (260, 4352, 261_600)
    );
    // An offset past the block is an error naming the value, the limit and the fix.
    let e = spec.aligned(Align::Offset(32), 32).unwrap_err();
    assert!(
        e.contains("align=32") && e.contains("32 sectors") && e.contains("align=block"),
        "{e}"
    );
    assert!(Align::parse("middle").unwrap_err().contains("spec"));
}

#[test]
fn next_free_allocation_continues_after_the_last_cluster_and_wraps() {
    // Files a and b written 512 B at a time, interleaved, on 32 MiB FAT16 (2 KiB clusters): a gets
    // clusters 2 and 4, b 3 and 5. After a is deleted, a 2-cluster file takes a's 2 and 4 under first-free,
    // and 6 and 7 under next-free.
    for (allocation, first, second) in [(Allocation::FirstFree, 2, 4), (Allocation::NextFree, 6, 7)]
    {
        let mut fs = FatFs::new(Layout::new(32 << 20, None, None).unwrap(), true, 1)
            .with_allocation(allocation);
        let a = fs.create(ROOT).unwrap();
        let b = fs.create(ROOT).unwrap();
        for i in 0..6 {
            fs.write(a, i * 512, 512).unwrap();
            fs.write(b, i * 512, 512).unwrap();
        }
        assert_eq!((fs.first_cluster(a), fs.fat_entry(2)), (2, 4));
        assert_eq!((fs.first_cluster(b), fs.fat_entry(3)), (3, 5));
        fs.delete(a);
        let c = fs.create(ROOT).unwrap();
        fs.write(c, 0, 4096).unwrap();
        assert_eq!(fs.first_cluster(c), first, "{allocation:?}");
        assert_eq!(fs.fat_entry(first), second, "{allocation:?}");
    }
    // Wrap: 16,343 clusters (2..=16,344). x takes 2..=16,341, y 16,342; x is deleted; a 4-cluster file
    // then takes 16,343, 16,344, 2, 3 under next-free, and 2, 3, 4, 5 under first-free.
    for (allocation, chain) in [
        (Allocation::NextFree, [16_343, 16_344, 2, 3]),
        (Allocation::FirstFree, [2, 3, 4, 5]),
    ] {
        let mut fs = FatFs::new(Layout::new(32 << 20, None, None).unwrap(), true, 1)
            .with_allocation(allocation);
        let x = fs.create(ROOT).unwrap();
        fs.write(x, 0, 16_340 * 2048).unwrap();
        let y = fs.create(ROOT).unwrap();
        fs.write(y, 0, 2048).unwrap();
        assert_eq!(fs.first_cluster(y), 16_342);
        fs.delete(x);
        let z = fs.create(ROOT).unwrap();
        fs.write(z, 0, 4 * 2048).unwrap();
        let mut got = vec![fs.first_cluster(z)];
        while got.len() < 4 {
            got.push(fs.fat_entry(*got.last().unwrap()));
        }
        assert_eq!(got, chain, "{allocation:?}");
        assert!(FatFs::is_end_of_chain(fs.fat_entry(chain[3])));
    }
}

#[test]
fn fat_workloads_take_align_and_allocation() {
    // fat-copydelete (FAT32, 512 B clusters on 64 MiB): the first data request is the first file's cluster 3
    // (cluster 2 is the root), so it moves with the data region that align places on 128 KiB blocks.
    let first_data = |spec: &str, block_bytes: u64| {
        let mut g = parse_spec(spec)
            .unwrap()
            .unwrap()
            .build_on(64 << 20, 2048, block_bytes)
            .unwrap();
        std::iter::from_fn(|| g.next_request())
            .map(Result::unwrap)
            .find(|r| r.tag == Tag::Data)
            .unwrap()
            .offset
    };
    let l = Layout::new(64 << 20, Some(32), Some(512)).unwrap();
    let cluster3 = |l: Layout| l.cluster_sector(3) * SECTOR;
    let spec = "fat-copydelete:seed=1,copies=2,file_mb=1,cluster=512";
    assert_eq!(first_data(spec, 128 << 10), cluster3(l));
    let aligned = l.aligned(Align::Offset(0), 256).unwrap();
    assert_eq!(aligned.first_data_sector() % 256, 0);
    assert_eq!(
        first_data(&format!("{spec},align=block"), 128 << 10),
        cluster3(aligned)
    );
    let shifted = l.aligned(Align::Offset(63), 256).unwrap();
    assert_eq!(shifted.first_data_sector() % 256, 63);
    assert_eq!(
        first_data(&format!("{spec},align=63"), 128 << 10),
        cluster3(shifted)
    );
    // Without a device (ftlsim info), the erase block is unknown: align other than spec is an error.
    let e = parse_spec(&format!("{spec},align=block"))
        .unwrap()
        .unwrap()
        .build(64 << 20, 2048)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("align=block") && e.contains("align=spec"), "{e}");
    let e = parse_spec(&format!("{spec},allocation=best-fit"))
        .unwrap()
        .unwrap()
        .build(64 << 20, 2048)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("next-free"), "{e}");
}
