//! A FAT12 / FAT16 / FAT32 file-system model that turns file operations into the block requests a FAT implementation
//! issues, tagged data or metadata (hot-write-reference paper, 003 §3-4: "the write references for file system
//! metadata such as File Allocation Table and DOS DIR ENTRY"), and the applications of 003 §4.3 on top of it.
//!
//! Layout (Microsoft FAT specification, fatgen103, "FAT Data Structure" and "FAT Type Determination"):
//! ```text
//! sector 0 .. reserved           boot sector (FAT32: also FSInfo and the backup boot sector); 1 sector on
//!                                FAT12 and FAT16, 32 on FAT32
//! FAT1, FAT2                     fat_sectors each: RootDirSectors = (root_entries x 32 + 511) / 512;
//!                                FATSz = ceil((sectors - reserved - RootDirSectors) / (256 x spc + 2)),
//!                                the divisor halved on FAT32
//! root directory (FAT12/16 only) 512 entries of 32 B = 32 sectors; on FAT32 the root is a cluster chain
//!                                starting at cluster 2
//! data                           cluster c (c >= 2) at first_data_sector + (c - 2) x spc
//! ```
//! Where the data region sits within an erase block is not stated by 003 or 004, so it is a
//! parameter, [`Align`]: the layout above as it falls (`spec`), or the reserved region padded so that the
//! first data sector starts an erase block (`block`, what SD-card formatters do) or lies a given number of
//! sectors into one. Padding only grows the reserved region: the FAT keeps the size computed above (still
//! large enough, as the clusters can only become fewer).
//!
//! FAT type: FAT32 from 512 MiB up, FAT16 below (fatgen103's recommendation, which mkfs.vfat follows for
//! hard disks); sectors per cluster from fatgen103's DskTableFAT16 / DskTableFAT32 (FAT16: up to 16 MiB 1 KiB,
//! up to 128 MiB 2 KiB, 256 MiB 4 KiB, 512 MiB 8 KiB, ...; FAT32: up to 260 MiB 512 B, 8 GiB 4 KiB, 16 GiB
//! 8 KiB, 32 GiB 16 KiB, beyond 32 KiB). Both can be forced (`fat=12|16|32`, `cluster=BYTES`); a combination
//! whose cluster count is outside the type's range (FAT12 up to 4084, FAT16 4085..65524, FAT32 65525 and up)
//! is an error. FAT12 is never chosen by size; `fat=12` makes it (as SD cards of up to 64 MB are formatted,
//! with 16 KiB clusters): 12-bit entries, an entry straddling two FAT sectors dirties both, the FAT sized for
//! every cluster the volume could hold (fatgen103's FATSz formula does not cover FAT12), and by default the
//! smallest cluster that keeps the count within FAT12's range.
//!
//! Operations and what they issue (in 512 B sectors):
//! - write call (offset, len): allocate clusters ([`Allocation`]: `first-free` from the lowest free cluster,
//!   or `next-free` from the cluster after the last one allocated, wrapping, the hint Linux (`prev_free`)
//!   and Windows (FSInfo's next-free) FAT drivers keep), each allocation
//!   changes the FAT entry of the new cluster and of the previous last one); write the data sectors covered
//!   (data); the directory entry (size and modification time change on every write call) and the FAT sectors
//!   changed, in both FAT copies (metadata).
//! - create: a directory entry in a free or deleted slot of the parent (metadata); a directory that is full
//!   grows by a cluster, which is zeroed (metadata writes of the whole cluster).
//! - mkdir: create, plus one cluster zeroed for "." and "..".
//! - delete: the chain's FAT entries set free (both copies) and the entry marked deleted (metadata). Data
//!   sectors are not touched.
//! - truncate: the clusters beyond the new size freed, the entry updated.
//! - read: the data sectors of the file, one request per contiguous run of clusters (data). The FAT and
//!   directories are assumed cached in RAM for reads (the OS keeps them in the buffer cache).
//!
//! `sync=true` (003's high-integrity mode, Linux VFAT mounted `-o sync`): at the end of each operation the
//! metadata sectors it dirtied are written, each once. `sync=false`: they are kept dirty and written back
//! every `flush_every` operations (sorted by sector), and once more at the end.
//!
//! Choices where 003 is silent: 8.3 names only (one 32 B entry per file; VFAT long names would add entries to
//! the same directory sectors); the FSInfo sector is not updated (Linux writes it at sync_fs / unmount);
//! metadata of one operation is issued after its data; application writes are whole sectors (a write of 96 B
//! rewrites its sector: the page cache holds the rest).

use crate::addr::Opt;
use crate::request::{Op, Request, Tag};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_pcg::Pcg64;
use std::collections::VecDeque;

pub const SECTOR: u64 = 512;
const FREE: u32 = 0;
const EOC: u32 = 0x0FFF_FFFF;

/// Where the data region starts relative to the device's erase blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// fatgen103's layout as it falls (no padding).
    Spec,
    /// The first data sector is this many sectors into an erase block (0: block-aligned).
    Offset(u64),
}

impl Align {
    /// `spec`, `block` or a sector offset.
    pub fn parse(text: &str) -> Result<Align, String> {
        match text {
            "spec" => Ok(Align::Spec),
            "block" => Ok(Align::Offset(0)),
            n => n.parse().map(Align::Offset).map_err(|_| {
                format!("align=`{n}`: pass spec (fatgen103's layout), block, or a sector offset")
            }),
        }
    }
}

/// How a new cluster is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allocation {
    /// The lowest free cluster.
    FirstFree,
    /// The first free cluster after the last one allocated, wrapping to cluster 2.
    NextFree,
}

impl Allocation {
    pub fn parse(text: &str) -> Result<Allocation, String> {
        match text {
            "first-free" => Ok(Allocation::FirstFree),
            "next-free" => Ok(Allocation::NextFree),
            other => Err(format!(
                "allocation=`{other}`: pass first-free or next-free"
            )),
        }
    }
}

/// Where everything is on a FAT volume, in sectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub fat_bits: u32,
    pub sectors: u64,
    pub sectors_per_cluster: u32,
    pub reserved_sectors: u32,
    pub fat_sectors: u32,
    pub root_entries: u32,
    pub root_dir_sectors: u32,
    /// Data clusters (numbered 2 .. clusters + 2).
    pub clusters: u32,
}

impl Layout {
    /// The layout of a volume of `bytes`, FAT type and cluster size by fatgen103 unless given.
    pub fn new(bytes: u64, fat: Option<u32>, cluster_bytes: Option<u32>) -> Result<Layout, String> {
        let sectors = bytes / SECTOR;
        let fat_bits = fat.unwrap_or(if bytes >= 512 << 20 { 32 } else { 16 });
        if ![12, 16, 32].contains(&fat_bits) {
            return Err(format!(
                "fat={fat_bits}: the model makes FAT12, FAT16 or FAT32 volumes (fat=12, 16 or 32)"
            ));
        }
        let spc = match cluster_bytes {
            Some(b) => {
                if !(b as u64 >= SECTOR && b.is_power_of_two() && b <= 64 << 10) {
                    return Err(format!(
                        "cluster={b}: a cluster is a power of two from 512 B to 64 KiB"
                    ));
                }
                b / SECTOR as u32
            }
            None if fat_bits == 12 => {
                let mut spc = 1u32;
                while sectors / spc as u64 > FAT12_MAX_CLUSTERS as u64 && spc < 128 {
                    spc *= 2;
                }
                spc
            }
            None if fat_bits == 16 => match sectors {
                0..=32_680 => 2,
                32_681..=262_144 => 4,
                262_145..=524_288 => 8,
                524_289..=1_048_576 => 16,
                1_048_577..=2_097_152 => 32,
                _ => 64,
            },
            None => match sectors {
                0..=532_480 => 1,
                532_481..=16_777_216 => 8,
                16_777_217..=33_554_432 => 16,
                33_554_433..=67_108_864 => 32,
                _ => 64,
            },
        };
        let (reserved, root_entries): (u32, u32) = if fat_bits == 32 { (32, 0) } else { (1, 512) };
        let root_dir_sectors = (root_entries * 32).div_ceil(SECTOR as u32);
        let overhead = reserved as u64 + root_dir_sectors as u64;
        let fat_sectors = if fat_bits == 12 {
            // 12 bits for each cluster the data could hold without the FATs, and the two reserved entries.
            ((sectors.saturating_sub(overhead) / spc as u64 + 2) * 3)
                .div_ceil(2)
                .div_ceil(SECTOR) as u32
        } else {
            let mut divisor = 256 * spc as u64 + 2;
            if fat_bits == 32 {
                divisor /= 2;
            }
            sectors.saturating_sub(overhead).div_ceil(divisor) as u32
        };
        let first_data = overhead + 2 * fat_sectors as u64;
        let clusters = (sectors.saturating_sub(first_data) / spc as u64) as u32;
        if let Some(range) = out_of_range(fat_bits, clusters) {
            return Err(format!(
                "a FAT{fat_bits} volume of {bytes} bytes with {} B clusters has {clusters} clusters, outside \
                 FAT{fat_bits}'s range ({range}); pass another fat=12|16|32, cluster=BYTES or volume=SIZE",
                spc as u64 * SECTOR,
            ));
        }
        Ok(Layout {
            fat_bits,
            sectors,
            sectors_per_cluster: spc,
            reserved_sectors: reserved,
            fat_sectors,
            root_entries,
            root_dir_sectors,
            clusters,
        })
    }

    /// The layout with its reserved region padded so that the data region starts as `align` asks on a
    /// device whose erase blocks hold `block_sectors` sectors.
    pub fn aligned(mut self, align: Align, block_sectors: u64) -> Result<Layout, String> {
        let Align::Offset(offset) = align else {
            return Ok(self);
        };
        if block_sectors == 0 || offset >= block_sectors {
            return Err(format!(
                "align={offset} sectors: the offset must be below the erase block's {block_sectors} sectors; \
                 pass align=block or a smaller offset"
            ));
        }
        let pad =
            (offset + block_sectors - self.first_data_sector() % block_sectors) % block_sectors;
        self.reserved_sectors += pad as u32;
        self.clusters = (self.sectors.saturating_sub(self.first_data_sector())
            / self.sectors_per_cluster as u64) as u32;
        if out_of_range(self.fat_bits, self.clusters).is_some() {
            return Err(format!(
                "aligning the data region leaves {} clusters, outside FAT{}'s range; pass align=spec or a larger volume",
                self.clusters, self.fat_bits
            ));
        }
        Ok(self)
    }

    pub fn fat_sector(&self, copy: u32) -> u64 {
        self.reserved_sectors as u64 + copy as u64 * self.fat_sectors as u64
    }

    /// First sector of the FAT12/16 root directory region (on FAT32, where the data region starts).
    pub fn root_dir_sector(&self) -> u64 {
        self.fat_sector(2)
    }

    pub fn first_data_sector(&self) -> u64 {
        self.root_dir_sector() + self.root_dir_sectors as u64
    }

    pub fn cluster_sector(&self, cluster: u32) -> u64 {
        self.first_data_sector() + (cluster as u64 - 2) * self.sectors_per_cluster as u64
    }

    pub fn cluster_bytes(&self) -> u64 {
        self.sectors_per_cluster as u64 * SECTOR
    }

    /// The first and last sectors (relative to the start of a FAT copy) holding the entry of `cluster`:
    /// different only for a FAT12 entry that straddles a sector boundary.
    fn fat_entry_sectors(&self, cluster: u32) -> [u64; 2] {
        let bits = self.fat_bits as u64;
        let first_bit = cluster as u64 * bits;
        [first_bit / 8 / SECTOR, (first_bit + bits - 1) / 8 / SECTOR]
    }

    /// True when the root directory is the fixed region after the FATs (FAT12, FAT16), not a cluster chain.
    fn fixed_root(&self) -> bool {
        self.fat_bits != 32
    }
}

/// Most clusters a FAT12 volume has (fatgen103, "FAT Type Determination": fewer than 4085).
const FAT12_MAX_CLUSTERS: u32 = 4084;

/// `None` when `clusters` is within the range of the FAT type, else the range in words.
fn out_of_range(fat_bits: u32, clusters: u32) -> Option<&'static str> {
    let (ok, range) = match fat_bits {
        12 => ((1..=FAT12_MAX_CLUSTERS).contains(&clusters), "1 to 4084"),
        16 => ((4085..65525).contains(&clusters), "4085 to 65524"),
        _ => (clusters >= 65525, "65525 and more"),
    };
    (!ok).then_some(range)
}

/// A file or directory.
#[derive(Clone, Debug, Default)]
struct Node {
    first: u32,
    last: u32,
    clusters: u32,
    size: u64,
    parent: u32,
    entry: u32,
    /// Directories: the node in each entry slot (none when free or deleted).
    entries: Vec<Opt<u32>>,
    /// A remembered position along the chain, (cluster index, cluster), so that writing a long file front
    /// to back walks its chain once rather than once per write call. (0, FREE) until first used.
    seek: (u32, u32),
}

/// The file system: FAT, directories, and the requests its operations issue.
pub struct FatFs {
    pub layout: Layout,
    fat: Vec<u32>,
    allocation: Allocation,
    lowest_free: u32,
    /// Next-free allocation: where the search for the next cluster starts.
    next_free: u32,
    free_clusters: u32,
    nodes: Vec<Node>,
    free_nodes: Vec<u32>,
    sync: bool,
    flush_every: u32,
    ops: u64,
    /// Metadata sectors dirtied by the operation under way, then (async) waiting for write-back.
    op_dirty: Vec<u64>,
    pending: Vec<u64>,
    /// The last request issued is data of the operation under way (the next contiguous one joins it).
    data_run: bool,
    pub out: VecDeque<Request>,
}

/// The root directory's node.
pub const ROOT: u32 = 0;

impl FatFs {
    /// A freshly formatted volume (formatting itself issues no requests: the trace starts after mkfs).
    pub fn new(layout: Layout, sync: bool, flush_every: u32) -> FatFs {
        let mut fs = FatFs {
            layout,
            fat: vec![FREE; layout.clusters as usize + 2],
            allocation: Allocation::FirstFree,
            lowest_free: 2,
            next_free: 2,
            free_clusters: layout.clusters,
            nodes: Vec::new(),
            free_nodes: Vec::new(),
            sync,
            flush_every: flush_every.max(1),
            ops: 0,
            op_dirty: Vec::new(),
            pending: Vec::new(),
            data_run: false,
            out: VecDeque::new(),
        };
        fs.fat[0] = EOC;
        fs.fat[1] = EOC;
        // The root is its own parent (its ".." is cluster 0); it has no entry to update.
        let mut root = Node {
            parent: ROOT,
            first: FREE,
            last: FREE,
            ..Default::default()
        };
        if layout.fixed_root() {
            root.entries = vec![Opt::NONE; layout.root_entries as usize];
        } else {
            // FAT32: the root is cluster 2, allocated by mkfs.
            fs.fat[2] = EOC;
            fs.lowest_free = 3;
            fs.next_free = 3;
            fs.free_clusters -= 1;
            root.first = 2;
            root.last = 2;
            root.clusters = 1;
            root.entries = vec![Opt::NONE; (layout.cluster_bytes() / 32) as usize];
        }
        fs.nodes.push(root);
        fs
    }

    /// The same volume allocating clusters by `allocation` (first-free unless set).
    pub fn with_allocation(mut self, allocation: Allocation) -> FatFs {
        self.allocation = allocation;
        self
    }

    pub fn free_bytes(&self) -> u64 {
        self.free_clusters as u64 * self.layout.cluster_bytes()
    }

    pub fn size(&self, node: u32) -> u64 {
        self.nodes[node as usize].size
    }

    /// The FAT entry of `cluster` (for tests walking a chain).
    pub fn fat_entry(&self, cluster: u32) -> u32 {
        self.fat[cluster as usize]
    }

    pub fn first_cluster(&self, node: u32) -> u32 {
        self.nodes[node as usize].first
    }

    pub fn is_end_of_chain(entry: u32) -> bool {
        entry >= 0x0FFF_FFF8
    }

    fn emit(&mut self, op: Op, sector: u64, sectors: u64, tag: Tag) {
        if sectors == 0 {
            return;
        }
        let request = Request {
            tag,
            ..Request::new(0.0, op, sector * SECTOR, sectors * SECTOR)
        };
        // Contiguous data sectors of one operation are one request.
        if self.data_run && tag == Tag::Data {
            if let Some(last) = self.out.back_mut() {
                if last.op == op && last.offset + last.len == request.offset {
                    last.len += request.len;
                    return;
                }
            }
        }
        self.data_run = tag == Tag::Data;
        self.out.push_back(request);
    }

    fn dirty(&mut self, sector: u64) {
        if !self.op_dirty.contains(&sector) {
            self.op_dirty.push(sector);
        }
    }

    fn dirty_fat(&mut self, cluster: u32) {
        for s in self.layout.fat_entry_sectors(cluster) {
            for copy in 0..2 {
                self.dirty(self.layout.fat_sector(copy) + s);
            }
        }
    }

    /// Ends a file-system operation: its metadata reaches the device now (sync) or at the next write-back.
    fn end_op(&mut self) {
        self.ops += 1;
        self.data_run = false;
        let mut dirty = std::mem::take(&mut self.op_dirty);
        if self.sync {
            for &s in &dirty {
                self.emit(Op::Write, s, 1, Tag::Metadata);
            }
        } else {
            for &s in &dirty {
                if !self.pending.contains(&s) {
                    self.pending.push(s);
                }
            }
            if self.ops.is_multiple_of(self.flush_every as u64) {
                self.write_back();
            }
        }
        dirty.clear();
        self.op_dirty = dirty;
    }

    /// Writes every pending metadata sector (async mode), in sector order.
    pub fn write_back(&mut self) {
        let mut pending = std::mem::take(&mut self.pending);
        pending.sort_unstable();
        for &s in &pending {
            self.emit(Op::Write, s, 1, Tag::Metadata);
        }
        pending.clear();
        self.pending = pending;
    }

    fn allocate_cluster(&mut self) -> Result<u32, String> {
        if self.free_clusters == 0 {
            return Err(format!(
                "the FAT volume ({} bytes) is full; pass a larger capacity or volume=SIZE, or smaller files",
                self.layout.sectors * SECTOR
            ));
        }
        let end = self.layout.clusters + 2;
        let mut c = match self.allocation {
            Allocation::FirstFree => self.lowest_free,
            Allocation::NextFree => self.next_free,
        };
        // A free cluster exists (checked above), so the search ends within one wrap.
        loop {
            if c >= end {
                c = 2;
            }
            if self.fat[c as usize] == FREE {
                break;
            }
            c += 1;
        }
        self.fat[c as usize] = EOC;
        if self.allocation == Allocation::FirstFree {
            self.lowest_free = c + 1;
        }
        self.next_free = c + 1;
        self.free_clusters -= 1;
        self.dirty_fat(c);
        Ok(c)
    }

    /// Appends a cluster to a node's chain.
    fn grow(&mut self, node: u32) -> Result<u32, String> {
        let c = self.allocate_cluster()?;
        let n = &mut self.nodes[node as usize];
        let prev = n.last;
        if n.clusters == 0 {
            n.first = c;
        }
        n.last = c;
        n.clusters += 1;
        if prev != FREE {
            self.fat[prev as usize] = c;
            self.dirty_fat(prev);
        }
        Ok(c)
    }

    /// The `index`-th cluster of a node's chain (walks the FAT; the last one is remembered).
    fn cluster_at(&self, node: u32, index: u32) -> u32 {
        let n = &self.nodes[node as usize];
        if index + 1 == n.clusters {
            return n.last;
        }
        let mut c = n.first;
        for _ in 0..index {
            c = self.fat[c as usize];
        }
        c
    }

    /// Like [`Self::cluster_at`], walking on from the node's remembered position when it lies before `index`,
    /// and remembering `index`.
    fn seek_cluster(&mut self, node: u32, index: u32) -> u32 {
        let n = &self.nodes[node as usize];
        let (from, mut c) = match n.seek {
            (i, c) if c != FREE && i <= index => (i, c),
            _ => (0, n.first),
        };
        if index + 1 == n.clusters {
            c = n.last;
        } else {
            for _ in from..index {
                c = self.fat[c as usize];
            }
        }
        self.nodes[node as usize].seek = (index, c);
        c
    }

    /// The sector holding a node's directory entry.
    fn entry_sector(&self, node: u32) -> u64 {
        let n = &self.nodes[node as usize];
        let byte = n.entry as u64 * 32;
        if n.parent == ROOT && self.layout.fixed_root() {
            return self.layout.root_dir_sector() + byte / SECTOR;
        }
        let cb = self.layout.cluster_bytes();
        let c = self.cluster_at(n.parent, (byte / cb) as u32);
        self.layout.cluster_sector(c) + (byte % cb) / SECTOR
    }

    /// Zeroes a new directory cluster (metadata writes of the whole cluster).
    fn zero_cluster(&mut self, c: u32) {
        let first = self.layout.cluster_sector(c);
        for s in first..first + self.layout.sectors_per_cluster as u64 {
            self.dirty(s);
        }
    }

    fn new_node(&mut self, parent: u32) -> Result<u32, String> {
        let slot = match self.nodes[parent as usize]
            .entries
            .iter()
            .position(|e| e.is_none())
        {
            Some(s) => s,
            None => {
                if parent == ROOT && self.layout.fixed_root() {
                    return Err(format!(
                        "the FAT{} root directory is full ({} entries); put files in directories",
                        self.layout.fat_bits, self.layout.root_entries
                    ));
                }
                let c = self.grow(parent)?;
                self.zero_cluster(c);
                let per = (self.layout.cluster_bytes() / 32) as usize;
                let p = &mut self.nodes[parent as usize];
                let s = p.entries.len();
                p.entries.resize(s + per, Opt::NONE);
                s
            }
        };
        let node = Node {
            parent,
            entry: slot as u32,
            ..Default::default()
        };
        let id = match self.free_nodes.pop() {
            Some(id) => {
                self.nodes[id as usize] = node;
                id
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() as u32 - 1
            }
        };
        self.nodes[parent as usize].entries[slot] = Opt::some(id);
        let s = self.entry_sector(id);
        self.dirty(s);
        Ok(id)
    }

    /// Creates an empty file in directory `parent`.
    pub fn create(&mut self, parent: u32) -> Result<u32, String> {
        let id = self.new_node(parent)?;
        self.end_op();
        Ok(id)
    }

    /// Creates a directory (its first cluster zeroed, holding "." and "..").
    pub fn mkdir(&mut self, parent: u32) -> Result<u32, String> {
        let id = self.new_node(parent)?;
        let c = self.grow(id)?;
        self.zero_cluster(c);
        let per = (self.layout.cluster_bytes() / 32) as usize;
        let n = &mut self.nodes[id as usize];
        n.entries = vec![Opt::NONE; per];
        n.entries[0] = Opt::some(id); // "."
        n.entries[1] = Opt::some(parent); // ".."
        self.end_op();
        Ok(id)
    }

    /// One application write call of `len` bytes at `offset`.
    pub fn write(&mut self, file: u32, offset: u64, len: u64) -> Result<(), String> {
        let cb = self.layout.cluster_bytes();
        let end = offset + len;
        while (self.nodes[file as usize].clusters as u64) * cb < end {
            self.grow(file)?;
        }
        let mut pos = offset - offset % SECTOR;
        while pos < end {
            let index = (pos / cb) as u32;
            let in_cluster_end = ((index as u64 + 1) * cb).min(end.next_multiple_of(SECTOR));
            let c = self.seek_cluster(file, index);
            let sector = self.layout.cluster_sector(c) + (pos % cb) / SECTOR;
            self.emit(
                Op::Write,
                sector,
                (in_cluster_end - pos) / SECTOR,
                Tag::Data,
            );
            pos = in_cluster_end;
        }
        let n = &mut self.nodes[file as usize];
        n.size = n.size.max(end);
        let s = self.entry_sector(file);
        self.dirty(s);
        self.end_op();
        Ok(())
    }

    /// Reads a whole file: one request per contiguous run of clusters.
    pub fn read(&mut self, file: u32) {
        let n = &self.nodes[file as usize];
        let spc = self.layout.sectors_per_cluster as u64;
        let mut left = n.size.div_ceil(SECTOR);
        let mut c = n.first;
        while left > 0 && c >= 2 && !Self::is_end_of_chain(c) {
            let sectors = left.min(spc);
            let s = self.layout.cluster_sector(c);
            self.emit(Op::Read, s, sectors, Tag::Data);
            left -= sectors;
            c = self.fat[c as usize];
        }
        self.ops += 1;
        self.data_run = false;
    }

    fn free_chain_from(&mut self, mut c: u32) {
        while c >= 2 && !Self::is_end_of_chain(c) {
            let next = self.fat[c as usize];
            self.fat[c as usize] = FREE;
            self.dirty_fat(c);
            self.free_clusters += 1;
            self.lowest_free = self.lowest_free.min(c);
            c = next;
        }
    }

    /// Truncates a file to `size` bytes, freeing the clusters beyond.
    pub fn truncate(&mut self, file: u32, size: u64) {
        let cb = self.layout.cluster_bytes();
        let keep = size.div_ceil(cb) as u32;
        let n = self.nodes[file as usize].clone();
        if keep < n.clusters {
            if keep == 0 {
                self.free_chain_from(n.first);
                let m = &mut self.nodes[file as usize];
                m.first = FREE;
                m.last = FREE;
            } else {
                let last = self.cluster_at(file, keep - 1);
                let rest = self.fat[last as usize];
                self.fat[last as usize] = EOC;
                self.dirty_fat(last);
                self.free_chain_from(rest);
                self.nodes[file as usize].last = last;
            }
            self.nodes[file as usize].clusters = keep;
            self.nodes[file as usize].seek = (0, FREE);
        }
        self.nodes[file as usize].size = size;
        let s = self.entry_sector(file);
        self.dirty(s);
        self.end_op();
    }

    /// Deletes a file: its chain freed in the FAT, its entry marked deleted.
    pub fn delete(&mut self, file: u32) {
        let n = self.nodes[file as usize].clone();
        self.free_chain_from(n.first);
        let s = self.entry_sector(file);
        self.dirty(s);
        self.nodes[n.parent as usize].entries[n.entry as usize] = Opt::NONE;
        self.nodes[file as usize] = Node::default();
        self.free_nodes.push(file);
        self.end_op();
    }
}

/// Writes `size` bytes to a new file in write calls of `unit` bytes.
fn write_file(fs: &mut FatFs, file: u32, from: u64, size: u64, unit: u64) -> Result<(), String> {
    let mut pos = from;
    while pos < from + size {
        let len = unit.min(from + size - pos);
        fs.write(file, pos, len)?;
        pos += len;
    }
    Ok(())
}

/// The applications of 003 §4.3 and 004 §VI, one step (a few file operations) at a time.
///
/// Choices: Camera keeps photos and the index in the root directory; the "past 60 photos all are deleted"
/// check runs before each photo is created (checking after a transaction would let 80 photos of up to
/// 500 KB overflow 003's 32 MB volume); deleting a photo moves the index's last record into its slot (one
/// 96 B write) and truncates the index by a record. PostMark appends a random amount up to the maximum file
/// size (PostMark 1.5 stops appending there) and reads whole files. CopyDelete deletes the oldest copies
/// until the next file fits, with sizes uniform within +-10% of the mean.
pub enum App {
    /// Camera-MS500 (003 §4.3).
    Camera {
        transactions: u32,
        photos: u32,
        min_bytes: u64,
        max_bytes: u64,
        max_photos: usize,
        record_bytes: u64,
        unit: u64,
        /// The index file, once created.
        index: Option<u32>,
        live: Vec<u32>,
        made: Vec<u32>,
        transaction: u32,
        step: u32,
    },
    /// PostMark v1.5 as configured in 003 §4.3.
    PostMark {
        dirs: Vec<u32>,
        initial: u32,
        min_bytes: u64,
        max_bytes: u64,
        transactions: u32,
        unit: u64,
        live: Vec<u32>,
        created: u32,
        done: u32,
    },
    /// Repeated copy and delete of files of a mean size (004 §VI, Table III).
    CopyDelete {
        mean_bytes: u64,
        copies: u32,
        unit: u64,
        live: VecDeque<u32>,
        done: u32,
    },
}

impl App {
    /// Runs the next step; false when the application has finished.
    pub fn step(&mut self, fs: &mut FatFs, rng: &mut Pcg64) -> Result<bool, String> {
        match self {
            App::Camera {
                transactions,
                photos,
                min_bytes,
                max_bytes,
                max_photos,
                record_bytes,
                unit,
                index,
                live,
                made,
                transaction,
                step,
            } => {
                if *transaction == *transactions {
                    return Ok(false);
                }
                let Some(index) = *index else {
                    *index = Some(fs.create(ROOT)?);
                    return Ok(true);
                };
                if *step < *photos {
                    // Past max_photos, every photo is deleted to make space (003 §4.3).
                    if live.len() >= *max_photos {
                        for p in live.drain(..) {
                            fs.delete(p);
                        }
                        made.clear();
                        fs.truncate(index, 0);
                    }
                    let size = rng.gen_range(*min_bytes..=*max_bytes);
                    let p = fs.create(ROOT)?;
                    write_file(fs, p, 0, size, *unit)?;
                    let at = fs.size(index);
                    fs.write(index, at, *record_bytes)?;
                    live.push(p);
                    made.push(p);
                    *step += 1;
                } else {
                    // Delete half of this transaction's photos; each one's index record is overwritten by
                    // the last record and the index shrinks by one record.
                    let mut mine: Vec<u32> = std::mem::take(made);
                    mine.shuffle(rng);
                    for &p in mine.iter().take(mine.len() / 2) {
                        let i = live.iter().position(|&q| q == p).expect("photo is live");
                        live.swap_remove(i);
                        fs.delete(p);
                        let last = fs.size(index) - *record_bytes;
                        fs.write(index, i as u64 * *record_bytes, *record_bytes)?;
                        fs.truncate(index, last);
                    }
                    *step = 0;
                    *transaction += 1;
                }
                Ok(true)
            }
            App::PostMark {
                dirs,
                initial,
                min_bytes,
                max_bytes,
                transactions,
                unit,
                live,
                created,
                done,
            } => {
                if *created < *initial {
                    let dir = dirs[rng.gen_range(0..dirs.len())];
                    let f = fs.create(dir)?;
                    let size = rng.gen_range(*min_bytes..=*max_bytes);
                    write_file(fs, f, 0, size, *unit)?;
                    live.push(f);
                    *created += 1;
                    return Ok(true);
                }
                if *done == *transactions {
                    return Ok(false);
                }
                // A pair of operations: create or delete, then append or read (PostMark 1.5, bias 5 each).
                if rng.gen_bool(0.5) || live.is_empty() {
                    let dir = dirs[rng.gen_range(0..dirs.len())];
                    let f = fs.create(dir)?;
                    let size = rng.gen_range(*min_bytes..=*max_bytes);
                    write_file(fs, f, 0, size, *unit)?;
                    live.push(f);
                } else {
                    let i = rng.gen_range(0..live.len());
                    fs.delete(live.swap_remove(i));
                }
                if !live.is_empty() {
                    let f = live[rng.gen_range(0..live.len())];
                    if rng.gen_bool(0.5) {
                        fs.read(f);
                    } else {
                        // PostMark appends up to the maximum file size.
                        let size = fs.size(f);
                        if size < *max_bytes {
                            let more = rng.gen_range(1..=*max_bytes - size);
                            write_file(fs, f, size, more, *unit)?;
                        }
                    }
                }
                *done += 1;
                Ok(true)
            }
            App::CopyDelete {
                mean_bytes,
                copies,
                unit,
                live,
                done,
            } => {
                if *done == *copies {
                    return Ok(false);
                }
                let spread = *mean_bytes / 10;
                let size = rng.gen_range(*mean_bytes - spread..=*mean_bytes + spread);
                // Delete the oldest copies until the new one fits with a cluster per 64 to spare.
                let need = size + size / 64 + fs.layout.cluster_bytes();
                while fs.free_bytes() < need {
                    match live.pop_front() {
                        Some(f) => fs.delete(f),
                        None => {
                            return Err(format!(
                                "a file of {size} bytes does not fit on the volume; pass a larger capacity or a smaller file_mb"
                            ))
                        }
                    }
                }
                let f = fs.create(ROOT)?;
                write_file(fs, f, 0, size, *unit)?;
                live.push_back(f);
                *done += 1;
                Ok(true)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fatgen103_default_cluster_sizes() {
        assert_eq!(
            Layout::new(32 << 20, None, None)
                .unwrap()
                .sectors_per_cluster,
            4
        );
        assert_eq!(Layout::new(32 << 20, None, None).unwrap().fat_bits, 16);
        assert_eq!(Layout::new(1 << 30, None, None).unwrap().fat_bits, 32);
        assert_eq!(
            Layout::new(1 << 30, None, None)
                .unwrap()
                .sectors_per_cluster,
            8
        );
        let e = Layout::new(32 << 20, Some(32), None).unwrap_err();
        assert!(e.contains("FAT32") && e.contains("fat=12|16|32"), "{e}");
    }

    #[test]
    fn fat12_layout_and_entries_that_straddle_two_sectors() {
        // 32 MiB = 65,536 sectors, fat=12: the smallest cluster keeping the count at most 4,084 is 32
        // sectors (16 sectors would give 4,096), 16 KiB. Reserved 1 + root 32 = 33 sectors; at most
        // (65,536 - 33) / 32 = 2,046 clusters, so the FAT holds 2,048 entries x 12 bits = 3,072 B = 6
        // sectors; the data starts at 33 + 2 x 6 = 45; (65,536 - 45) / 32 = 2,046 clusters.
        let l = Layout::new(32 << 20, Some(12), None).unwrap();
        assert_eq!(
            (l.sectors_per_cluster, l.fat_sectors, l.clusters),
            (32, 6, 2046)
        );
        assert_eq!(l.first_data_sector(), 45);
        // Cluster 340's entry is bits 4,080..4,091: bytes 510-511, sector 0. Cluster 341's is bits
        // 4,092..4,103: bytes 511-512, sectors 0 and 1. FAT16 entries never straddle: 256 is bytes 512-513.
        assert_eq!(l.fat_entry_sectors(340), [0, 0]);
        assert_eq!(l.fat_entry_sectors(341), [0, 1]);
        let l16 = Layout::new(32 << 20, None, None).unwrap();
        assert_eq!(l16.fat_entry_sectors(255), [0, 0]);
        assert_eq!(l16.fat_entry_sectors(256), [1, 1]);
        // 8 KiB clusters give 8,188 clusters: beyond FAT12's range, an error that says so.
        let e = Layout::new(32 << 20, Some(12), Some(8192)).unwrap_err();
        assert!(
            e.contains("1 to 4084") && e.contains("cluster=BYTES"),
            "{e}"
        );
    }
}
