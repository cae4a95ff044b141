//! The simulated NAND chip: the only place that owns pages and blocks, and the only place that counts
//! flash operations. It enforces the NAND rules: a programmed page cannot be programmed again until its
//! block is erased, addresses must be on the chip, and (optionally, MLC) the pages of a block are
//! programmed in increasing order.
//!
//! Memory grows with the blocks that hold data, not with the device: a block's pages are allocated from a
//! slab when its first page is programmed and given back when it is erased; the slab grows geometrically but
//! never past the chip's pages. A page record is 11 bytes, packed (data token 4, sequence 4, logical page 3):
//! a page is programmed exactly when its sequence number is not 0, so it needs no state byte. What few pages
//! carry lives beside the records, so that every page does not pay for it: the scheme word and the flag bits
//! in [`Extras`], allocated per block at its first such program (log blocks, map blocks, NFTL's chains); a
//! token's bits past 32 (after 4 billion host writes) in an array beside the slab ([`HighBits`], 2 bits a
//! record up to 2^34 - 2 host writes), kept only from the first such token; the logical page's bits past 24
//! in an array beside the slab ([`lpn_high`]), kept only from the first logical page past 24 bits (a device
//! of more than 16,777,215 logical pages), in 2 bits a record up to 67,108,862 logical pages (a 512 GiB
//! drive of 8 KiB pages), 4 or 8 past that. Block states (erase count, slab slot, write frontier, extras slot) are 16 bytes
//! in a sparse vector, allocated in chunks of 4,096 blocks as they are touched. With the read oracle's 4
//! bytes a logical page, a chip of 64-page blocks holds under 16 bytes a physical page whatever its spare.

use crate::addr::{Lpn, Opt, Pbn, Ppn, SourcePage, Token};
use crate::cache_hint::prefetch;
use crate::high_bits::HighBits;
use crate::sparse::SparseVec;
use crate::stats::FlashCounts;
use lpn_high::LpnHigh;

mod lpn_high;

/// `Spare::flags` in its erased state: NAND bits read as ones until programmed to zero.
pub const FLAGS_ERASED: u8 = 0xFF;

/// A page record's token word for a torn page (a program cut by a power loss), with no high bits kept for it:
/// the chip's ECC cannot correct it, so a read gives no data and no logical page.
const TORN: u32 = u32::MAX;

/// How a record keeps token `token`: a token below [`TORN`] as itself in the record's word, any other as
/// `token + 1` (so never all ones with no high bits: torn), its low 32 bits in the word and the rest in
/// [`Nand`]'s `token_high`. Host tokens count up from 1: the first 4,294,967,294 host writes need no high
/// bits. Tokens stay below 2^63 (the oracle's trimmed bit).
#[inline(always)]
fn stored(token: Token) -> (u32, u64) {
    if token < TORN as Token {
        (token as u32, 0)
    } else {
        let kept = token + 1;
        (kept as u32, kept >> 32)
    }
}

/// The token a record keeps as `word` with high bits `high` (see [`stored`]); None: torn.
#[inline(always)]
fn token_of(word: u32, high: u64) -> Option<Token> {
    match (word, high) {
        (TORN, 0) => None,
        (word, 0) => Some(word as Token),
        (word, high) => Some((high << 32 | word as Token) - 1),
    }
}

/// The bad-block marker of a factory bad block, as [`Nand::bad_marker`] reads it; a grown bad block's marker is
/// the number of its failure (1 for the first block that went bad, 2 for the next, ...); 0 is a good block.
pub const FACTORY_BAD: u32 = u32::MAX;

/// The spare (out-of-band) area of a page as the chip stores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spare {
    /// Logical page stored in the page; none if the page is erased, torn or written by the scheme for itself.
    pub lpn: Opt<Lpn>,
    /// Chip-wide program sequence number, stamped at program time (0 for an erased page, so the count skips 0
    /// when it wraps).
    pub seq: u32,
    /// A scheme-specific word (a replacement-block pointer, a map-page number), write-once.
    pub aux: Opt<u32>,
    /// Scheme-specific flag bits; a spare program can only clear bits (1 -> 0), as on real NAND.
    pub flags: u8,
}

impl Spare {
    pub const ERASED: Spare = Spare {
        lpn: Opt::NONE,
        seq: 0,
        aux: Opt::NONE,
        flags: FLAGS_ERASED,
    };

    /// The logical page stored in the page, if any.
    #[inline]
    pub fn lpn(&self) -> Option<Lpn> {
        self.lpn.get()
    }

    /// The scheme word, if it was programmed.
    #[inline]
    pub fn aux(&self) -> Option<u32> {
        self.aux.get()
    }
}

/// What a page read returns: the data token (None if the page is erased) and the spare area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageRead {
    pub token: Option<Token>,
    pub spare: Spare,
}

/// A page as the chip stores it (11 bytes, packed: the slab holds nothing else a page). The scheme word and
/// flags are in the block's [`Extras`]; the logical page's bits past 24, in [`Nand`]'s `lpn_high` once a
/// logical page past 24 bits has been programmed.
#[derive(Clone, Copy)]
#[repr(C, packed)]
struct Page {
    /// The data token's low 32 bits ([`stored`]), or [`TORN`].
    token: u32,
    /// Not 0 exactly when the page is programmed.
    seq: u32,
    /// The low 24 bits of the logical page (little-endian); all ones, with all ones in the high bits kept (or
    /// none kept): none.
    lpn_low: [u8; 3],
}

impl Page {
    #[inline]
    fn programmed(&self) -> bool {
        self.seq != 0
    }

    /// The data token a read returns, with `high`, the token's bits kept beside the slab: none for a page
    /// not programmed or torn.
    #[inline]
    fn token(&self, high: u64) -> Option<Token> {
        if self.programmed() {
            token_of(self.token, high)
        } else {
            None
        }
    }
}

const ERASED_PAGE: Page = Page {
    token: 0,
    seq: 0,
    lpn_low: [0xFF; 3],
};

/// The parts of the spare area that few pages carry, the scheme word and the flag bits, for the pages that
/// carry any: in chunks of a block's pages, or of [`EXTRAS_CHUNK`] pages in larger blocks, a chunk given at
/// the first scheme word or flag program of a page in it and back at its block's erase. A block of larger
/// blocks with any has a directory of its chunks, given with its first chunk; a block of one chunk names its
/// chunk itself. A page without a chunk reads its words as erased ([`Spare::ERASED`]). Chunks rather than
/// blocks: a block of 256 pages that carries one scheme word (LAST's switched log blocks) costs a chunk of
/// 64 pages and its directory, not 256 pages' words.
struct Extras {
    /// Pages a chunk: the block's, at most [`EXTRAS_CHUNK`].
    chunk_pages: usize,
    /// Chunks a block; with one, a block's extras slot is its chunk.
    chunks_per_block: usize,
    /// Blocks of more than one chunk: their directories, `chunks_per_block` entries each (a chunk, or none).
    directories: Vec<Opt<u32>>,
    free_directories: Vec<u32>,
    /// The chunks' entries, `chunk_pages` each.
    aux: Vec<Opt<u32>>,
    flags: Vec<u8>,
    free_chunks: Vec<u32>,
}

/// Pages a chunk of [`Extras`] in blocks of more pages (a power of two).
const EXTRAS_CHUNK: usize = 64;

impl Extras {
    fn new(pages_per_block: u32) -> Extras {
        let chunk_pages = (pages_per_block as usize).min(EXTRAS_CHUNK);
        Extras {
            chunk_pages,
            chunks_per_block: (pages_per_block as usize).div_ceil(chunk_pages),
            directories: Vec::new(),
            free_directories: Vec::new(),
            aux: Vec::new(),
            flags: Vec::new(),
            free_chunks: Vec::new(),
        }
    }

    /// Page `page`'s scheme word and flags in the block whose extras slot is `slot`.
    #[inline]
    fn get(&self, slot: Opt<u32>, page: usize) -> (Opt<u32>, u8) {
        let Some(s) = slot.get() else {
            return (Opt::NONE, FLAGS_ERASED);
        };
        let at = if self.chunks_per_block == 1 {
            s as usize * self.chunk_pages + page
        } else {
            match self.directories[s as usize * self.chunks_per_block + page / EXTRAS_CHUNK].get() {
                None => return (Opt::NONE, FLAGS_ERASED),
                Some(chunk) => chunk as usize * EXTRAS_CHUNK + page % EXTRAS_CHUNK,
            }
        };
        (self.aux[at], self.flags[at])
    }

    /// Where page `page`'s entries are, giving the block (whose extras slot is `slot`) its directory and the
    /// page its chunk first if it has none.
    fn at(&mut self, slot: &mut Opt<u32>, page: usize) -> usize {
        if self.chunks_per_block == 1 {
            let chunk = match slot.get() {
                Some(chunk) => chunk,
                None => self.new_chunk(),
            };
            *slot = Opt::some(chunk);
            return chunk as usize * self.chunk_pages + page;
        }
        let d = match slot.get() {
            Some(d) => d,
            None => match self.free_directories.pop() {
                Some(d) => d,
                None => {
                    let per_block = self.chunks_per_block;
                    self.directories
                        .resize(self.directories.len() + per_block, Opt::NONE);
                    (self.directories.len() / per_block - 1) as u32
                }
            },
        };
        *slot = Opt::some(d);
        let entry = d as usize * self.chunks_per_block + page / EXTRAS_CHUNK;
        let chunk = match self.directories[entry].get() {
            Some(chunk) => chunk,
            None => self.new_chunk(),
        };
        self.directories[entry] = Opt::some(chunk);
        chunk as usize * EXTRAS_CHUNK + page % EXTRAS_CHUNK
    }

    /// A chunk of erased entries: a freed one, else a new one.
    fn new_chunk(&mut self) -> u32 {
        let pages = self.chunk_pages;
        match self.free_chunks.pop() {
            Some(chunk) => {
                let run = chunk as usize * pages..(chunk as usize + 1) * pages;
                self.aux[run.clone()].fill(Opt::NONE);
                self.flags[run].fill(FLAGS_ERASED);
                chunk
            }
            None => {
                self.aux.resize(self.aux.len() + pages, Opt::NONE);
                self.flags.resize(self.flags.len() + pages, FLAGS_ERASED);
                (self.aux.len() / pages - 1) as u32
            }
        }
    }

    /// The block whose extras slot is `slot` was erased: its chunks (and directory) go back.
    fn release(&mut self, slot: &mut Opt<u32>) {
        let Some(s) = slot.take() else {
            return;
        };
        if self.chunks_per_block == 1 {
            self.free_chunks.push(s);
            return;
        }
        let per_block = self.chunks_per_block;
        let entries = s as usize * per_block..(s as usize + 1) * per_block;
        for entry in &mut self.directories[entries] {
            self.free_chunks.extend(entry.take());
        }
        self.free_directories.push(s);
    }

    fn heap_bytes(&self) -> usize {
        self.directories.capacity() * std::mem::size_of::<Opt<u32>>()
            + self.free_directories.capacity() * std::mem::size_of::<u32>()
            + self.aux.capacity() * std::mem::size_of::<Opt<u32>>()
            + self.flags.capacity()
            + self.free_chunks.capacity() * std::mem::size_of::<u32>()
    }
}

/// A block's state (16 bytes).
#[derive(Clone, Copy)]
struct BlockState {
    erase_count: u32,
    /// Index of this block's pages in the slab, none while every page is erased.
    slot: Opt<u32>,
    /// One past the highest page programmed since the last erase (the in-order rule's frontier).
    next_page: u32,
    /// Index of this block's scheme words and flags in [`Extras`], none while no page carries one. Page 0's
    /// scheme word is the block's header ([`Nand::read_header`]).
    extras: Opt<u32>,
}

/// A NAND rule the caller broke; the device turns it into an error naming the scheme.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub what: &'static str,
    pub block: u32,
    pub page: u32,
}

/// Which counters an operation lands in: host data and merges, or the scheme's own mapping pages. Every chip
/// operation takes its class as an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpClass {
    Data = 0,
    Map = 1,
}

/// Operations of every class, and those of the map class alone (the data class is the difference): the run
/// loop reads the total once per request.
#[derive(Clone, Copy, Default)]
struct Counters {
    total: FlashCounts,
    map: FlashCounts,
}

impl Counters {
    /// Counts one operation of `class` in the counter `field` picks.
    #[inline(always)]
    fn tally(&mut self, class: OpClass, field: impl Fn(&mut FlashCounts) -> &mut u64) {
        self.tally_n(class, field, 1);
    }

    /// Counts `n` operations of `class` in the counter `field` picks.
    #[inline(always)]
    fn tally_n(&mut self, class: OpClass, field: impl Fn(&mut FlashCounts) -> &mut u64, n: u64) {
        *field(&mut self.total) += n;
        if class == OpClass::Map {
            *field(&mut self.map) += n;
        }
    }
}

pub struct Nand {
    pages_per_block: u32,
    /// log2 of `pages_per_block` when it is a power of two (a shift splits an address), else None (a division).
    page_shift: Option<u32>,
    sequential_program: bool,
    blocks: SparseVec<BlockState>,
    slab: Vec<Page>,
    /// The high bits of every slab record's logical page, beside the slab (same places), once a logical page
    /// that does not fit a record's 24 bits has been programmed; none kept until then.
    lpn_high: LpnHigh,
    free_slots: Vec<u32>,
    extras: Extras,
    /// The high bits of every slab record's token ([`stored`]), beside the slab (same places), once a token
    /// that needs them has been programmed; none kept until then.
    token_high: HighBits,
    seq: u32,
    counts: Counters,
    /// Blocks whose header (page 0's scheme word) is programmed: what lets [`Nand::confirm_headers`] answer a
    /// scan of many headers without visiting them.
    headers: u32,
    /// Bad blocks among them: a block whose erase failed keeps its pages, header included, but no scheme block
    /// is mapped to it any more, so no scan of the scheme's blocks reads it.
    bad_headers: u32,
    /// Bad-block markers per block ([`FACTORY_BAD`], a grown failure's number, 0 for good); empty while no
    /// block is bad, so a chip without bad blocks pays nothing.
    bad: Vec<u32>,
    /// Erases a block survives ([`Nand::set_endurance`]); the erase after them fails. None: unlimited.
    endurance: Option<u32>,
    /// Lifetime erases per block while an endurance is set (never reset, unlike the reported erase counts).
    wear: Vec<u32>,
}

impl Nand {
    pub fn new(blocks: u32, pages_per_block: u32, sequential_program: bool) -> Nand {
        Nand {
            pages_per_block,
            page_shift: pages_per_block
                .is_power_of_two()
                .then(|| pages_per_block.trailing_zeros()),
            sequential_program,
            blocks: SparseVec::new(
                blocks as usize,
                BlockState {
                    erase_count: 0,
                    slot: Opt::NONE,
                    next_page: 0,
                    extras: Opt::NONE,
                },
            ),
            slab: Vec::new(),
            lpn_high: LpnHigh::new(),
            free_slots: Vec::new(),
            extras: Extras::new(pages_per_block),
            token_high: HighBits::default(),
            seq: 0,
            counts: Counters::default(),
            headers: 0,
            bad_headers: 0,
            bad: Vec::new(),
            endurance: None,
            wear: Vec::new(),
        }
    }

    /// From now on an erase of a block that has been erased `endurance` times fails (the block goes bad).
    pub fn set_endurance(&mut self, endurance: u32) {
        self.endurance = Some(endurance);
        self.wear = vec![0; self.blocks.len()];
    }

    /// Writes a bad-block marker into block `pbn`'s spare area (one spare program in `class`; a factory
    /// marker is the manufacturer's, written before the chip is counted, so pass None).
    pub fn mark_bad(&mut self, pbn: Pbn, marker: u32, class: Option<OpClass>) {
        if self.bad.is_empty() {
            self.bad = vec![0; self.blocks.len()];
        }
        let header = self.header(pbn.index()).is_some() as u32;
        self.bad_headers -= header * (self.bad[pbn.index()] != 0) as u32;
        self.bad_headers += header * (marker != 0) as u32;
        self.bad[pbn.index()] = marker;
        if let Some(class) = class {
            self.counts.tally(class, |c| &mut c.spare_writes);
        }
    }

    /// Reads block `pbn`'s bad-block marker from its first page's spare area (one spare read): 0 for a good
    /// block, [`FACTORY_BAD`], or the number of the grown failure.
    pub fn bad_marker(&mut self, pbn: Pbn, class: OpClass) -> u32 {
        self.counts.tally(class, |c| &mut c.spare_reads);
        self.bad.get(pbn.index()).copied().unwrap_or(0)
    }

    /// Bad blocks that keep a header (a test's view).
    #[cfg(test)]
    pub fn bad_headers(&self) -> u32 {
        self.bad_headers
    }

    /// Whether chip block `block` is bad from the factory (read without a spare read: for the report).
    pub fn is_factory_bad(&self, block: usize) -> bool {
        self.bad.get(block) == Some(&FACTORY_BAD)
    }

    #[inline]
    fn is_bad(&self, block: usize) -> bool {
        !self.bad.is_empty() && self.bad[block] != 0
    }

    pub fn blocks(&self) -> u32 {
        self.blocks.len() as u32
    }

    pub fn pages_per_block(&self) -> u32 {
        self.pages_per_block
    }

    /// Operation counts of one class.
    pub fn counts(&self, class: OpClass) -> FlashCounts {
        match class {
            OpClass::Data => self.counts.total.minus(&self.counts.map),
            OpClass::Map => self.counts.map,
        }
    }

    /// Operation counts of all classes together.
    #[inline]
    pub fn total_counts(&self) -> FlashCounts {
        self.counts.total
    }

    /// Zeroes operation counters and erase counts (after preconditioning); data stays.
    pub fn reset_counters(&mut self) {
        self.counts = Counters::default();
        for b in 0..self.blocks.len() {
            if self.blocks.get(b).erase_count != 0 {
                self.blocks.get_mut(b).erase_count = 0;
            }
        }
    }

    pub fn erase_count(&self, pbn: Pbn) -> u32 {
        self.blocks.get(pbn.index()).erase_count
    }

    pub fn erase_counts(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.blocks.len()).map(|b| self.blocks.get(b).erase_count)
    }

    /// Bytes of host memory the chip model holds now.
    pub fn heap_bytes(&self) -> usize {
        self.blocks.heap_bytes()
            + self.slab.capacity() * std::mem::size_of::<Page>()
            + self.lpn_high.heap_bytes()
            + self.free_slots.capacity() * std::mem::size_of::<u32>()
            + self.extras.heap_bytes()
            + self.token_high.heap_bytes()
    }

    /// (block, page in the block) of a chip address.
    #[inline]
    fn split(&self, ppn: Ppn) -> (u32, u32) {
        match self.page_shift {
            Some(shift) => (ppn.0 >> shift, ppn.0 & (self.pages_per_block - 1)),
            None => (ppn.0 / self.pages_per_block, ppn.0 % self.pages_per_block),
        }
    }

    #[inline]
    fn locate(&self, ppn: Ppn, what: &'static str) -> Result<(usize, usize), Violation> {
        let (block, page) = self.split(ppn);
        if block as usize >= self.blocks.len() {
            return Err(Violation { what, block, page });
        }
        Ok((block as usize, page as usize))
    }

    #[inline]
    fn page(&self, block: usize, page: usize) -> &Page {
        match self.blocks.get(block).slot.get() {
            None => &ERASED_PAGE,
            Some(slot) => &self.slab[slot as usize * self.pages_per_block as usize + page],
        }
    }

    /// Where page `page` of `block` (on the chip) lives in the slab, giving the block a slot if it has none.
    fn slot_index(&mut self, block: usize, page: usize) -> usize {
        let ppb = self.pages_per_block as usize;
        let chip_pages = self.blocks.len() * ppb;
        let state = self.blocks.get_mut(block);
        let slot = state.slot.get_or_insert_with(|| {
            give_slot(
                &mut self.slab,
                (&mut self.lpn_high, &mut self.token_high),
                &mut self.free_slots,
                ppb,
                chip_pages,
            )
        });
        slot as usize * ppb + page
    }

    /// The logical page of the slab's record `at`.
    #[inline(always)]
    fn lpn_at(&self, at: usize) -> Opt<Lpn> {
        let [b0, b1, b2] = self.slab[at].lpn_low;
        match self.lpn_high.raw(at, u32::from_le_bytes([b0, b1, b2, 0])) {
            u32::MAX => Opt::NONE,
            raw => Opt::some(Lpn(raw)),
        }
    }

    /// Stores `lpn` in the slab's record `at`, keeping high bits from the first logical page that needs them.
    #[inline(always)]
    fn set_lpn(&mut self, at: usize, lpn: Opt<Lpn>) {
        let raw = lpn.get().map_or(u32::MAX, |l| l.0);
        if !self.lpn_high.holds(raw) {
            let slab = &self.slab;
            self.lpn_high.widen(raw, slab.len(), slab.capacity(), |at| {
                let [b0, b1, b2] = slab[at].lpn_low;
                u32::from_le_bytes([b0, b1, b2, 0])
            });
        }
        let [b0, b1, b2, _] = raw.to_le_bytes();
        self.slab[at].lpn_low = [b0, b1, b2];
        self.lpn_high.set_raw(at, raw);
    }

    /// What page `page` of `block` (on the chip) holds, as a read returns it.
    #[inline(always)]
    fn page_read(&self, block: usize, page: usize) -> PageRead {
        let state = self.blocks.get(block);
        let (record, lpn, high) = match state.slot.get() {
            None => (ERASED_PAGE, Opt::NONE, 0),
            Some(slot) => {
                let at = slot as usize * self.pages_per_block as usize + page;
                (self.slab[at], self.lpn_at(at), self.token_high.get(at))
            }
        };
        let (aux, flags) = self.extras.get(state.extras, page);
        PageRead {
            token: record.token(high),
            spare: Spare {
                lpn,
                seq: record.seq,
                aux,
                flags,
            },
        }
    }

    /// The scheme word of block `block`'s first page (its header).
    #[inline]
    fn header(&self, block: usize) -> Opt<u32> {
        self.extras.get(self.blocks.get(block).extras, 0).0
    }

    /// Asks the CPU to bring page `ppn`'s record into cache ahead of an operation on it: a hint to the host,
    /// not a flash operation (nothing is counted or checked; an erased block or an address off the chip is
    /// ignored).
    #[inline]
    pub fn prefetch(&self, ppn: Ppn) {
        let (b, p) = self.split(ppn);
        if let Some(at) = self.slab_index(b as usize, p as usize) {
            prefetch(&self.slab[at]);
        }
    }

    /// [`Nand::prefetch`] for every page of block `pbn` (a merge or GC about to go through it).
    #[inline]
    pub fn prefetch_block(&self, pbn: Pbn) {
        let ppb = self.pages_per_block as usize;
        let Some(first) = self.slab_index(pbn.index(), 0) else {
            return;
        };
        let block = &self.slab[first..first + ppb];
        let lines = std::mem::size_of_val(block).div_ceil(64);
        let base = block.as_ptr().cast::<u8>();
        for line in 0..lines {
            // The last line may start past the block's last byte but never past the slab's.
            prefetch(base.wrapping_add(line * 64));
        }
    }

    /// Where page `page` of `block` lives in the slab, None while the block is erased or off the chip.
    #[inline]
    fn slab_index(&self, block: usize, page: usize) -> Option<usize> {
        if block >= self.blocks.len() {
            return None;
        }
        self.blocks
            .get(block)
            .slot
            .get()
            .map(|slot| slot as usize * self.pages_per_block as usize + page)
    }

    /// Reads a page: data and spare area (one page read).
    #[inline(always)]
    pub fn read(&mut self, ppn: Ppn, class: OpClass) -> Result<PageRead, Violation> {
        let (b, p) = self.locate(ppn, "read beyond the chip")?;
        self.counts.tally(class, |c| &mut c.page_reads);
        Ok(self.page_read(b, p))
    }

    /// Reads a page (one page read) for its data alone: [`Nand::read`]'s token, without the spare area a scheme
    /// that only wants the data does not look at.
    #[inline(always)]
    pub fn read_token(&mut self, ppn: Ppn, class: OpClass) -> Result<Option<Token>, Violation> {
        let (b, p) = self.locate(ppn, "read beyond the chip")?;
        self.counts.tally(class, |c| &mut c.page_reads);
        Ok(self
            .slab_index(b, p)
            .and_then(|at| self.slab[at].token(self.token_high.get(at))))
    }

    /// Reads only the spare area (one spare read).
    #[inline(always)]
    pub fn read_spare(&mut self, ppn: Ppn, class: OpClass) -> Result<Spare, Violation> {
        let (b, p) = self.locate(ppn, "spare read beyond the chip")?;
        self.counts.tally(class, |c| &mut c.spare_reads);
        Ok(self.page_read(b, p).spare)
    }

    /// Reads the scheme word of block `pbn`'s first page (one spare read, of the part of the spare area that
    /// holds it): None while it is erased. The same word [`Nand::read_spare`] of page 0 gives.
    #[inline]
    pub fn read_header(&mut self, pbn: Pbn, class: OpClass) -> Result<Option<u32>, Violation> {
        if pbn.index() >= self.blocks.len() {
            return Err(Violation {
                what: "spare read beyond the chip",
                block: pbn.0,
                page: 0,
            });
        }
        self.counts.tally(class, |c| &mut c.spare_reads);
        Ok(self.header(pbn.index()).get())
    }

    /// Counts `scanned` header reads ([`Nand::read_header`]) of which exactly the blocks `holders` (distinct,
    /// good) find a header, once the chip has confirmed it: every holder's header is programmed and no other
    /// good block's is (a bad block keeps the header it had when its erase failed, but no scan reads it).
    /// Counts nothing when it does not: the caller named the wrong blocks.
    pub fn confirm_headers(
        &mut self,
        scanned: u64,
        holders: &[Pbn],
        class: OpClass,
    ) -> Result<(), Violation> {
        if let Some(b) = holders.iter().find(|b| {
            b.index() >= self.blocks.len()
                || self.is_bad(b.index())
                || self.header(b.index()).is_none()
        }) {
            return Err(Violation {
                what: "header scan: a block named as holding a header holds none",
                block: b.0,
                page: 0,
            });
        }
        if holders.len() as u64 > scanned {
            return Err(Violation {
                what: "header scan: more blocks named as holding a header than headers read",
                block: holders[0].0,
                page: 0,
            });
        }
        if holders.len() != (self.headers - self.bad_headers) as usize {
            let unnamed = (0..self.blocks.len()).find(|&b| {
                !self.is_bad(b) && self.header(b).is_some() && !holders.contains(&Pbn(b as u32))
            });
            return Err(Violation {
                what: "header scan: blocks hold a header that the scan does not name",
                block: unnamed.unwrap_or(0) as u32,
                page: 0,
            });
        }
        self.counts.tally_n(class, |c| &mut c.spare_reads, scanned);
        Ok(())
    }

    /// Programs a page with a data token, the logical page it holds (none for a page the scheme writes for
    /// itself) and an optional scheme word. A page whose scheme word was already programmed keeps it.
    #[inline(always)]
    pub fn program(
        &mut self,
        ppn: Ppn,
        token: Token,
        lpn: Opt<Lpn>,
        aux: Opt<u32>,
        class: OpClass,
    ) -> Result<(), Violation> {
        let (b, p) = self.split(ppn);
        let block = b as usize;
        if block >= self.blocks.len() || self.is_bad(block) {
            return Err(self.refused(b, p));
        }
        let ppb = self.pages_per_block as usize;
        let chip_pages = self.blocks.len() * ppb;
        let state = self.blocks.get_mut(block);
        let slot = state.slot.get_or_insert_with(|| {
            give_slot(
                &mut self.slab,
                (&mut self.lpn_high, &mut self.token_high),
                &mut self.free_slots,
                ppb,
                chip_pages,
            )
        });
        let at = slot as usize * ppb + p as usize;
        let page = &mut self.slab[at];
        let out_of_order = self.sequential_program && p < state.next_page;
        let aux_taken = aux.is_some() && self.extras.get(state.extras, p as usize).0.is_some();
        if page.programmed() || out_of_order || aux_taken {
            return Err(broken_program(page.programmed(), out_of_order, b, p));
        }
        self.counts.tally(class, |c| &mut c.page_writes);
        // The count skips 0 (an erased page's) when it wraps.
        self.seq = self.seq.wrapping_add(1).max(1);
        let (word, high) = stored(token);
        page.token = word;
        page.seq = self.seq;
        if aux.is_some() {
            let at = self.extras.at(&mut state.extras, p as usize);
            self.extras.aux[at] = aux;
            self.headers += (p == 0) as u32;
        }
        state.next_page = state.next_page.max(p + 1);
        self.set_lpn(at, lpn);
        if high != 0 {
            self.keep_token_high(at, high);
        }
        Ok(())
    }

    /// Copies page `from` to page `to` (one page read, and one program unless `from` holds no data): what
    /// [`Nand::read`] then [`Nand::program`] do, in one call on the engine's hottest path (merges and GC).
    /// Returns the copied page's logical page (itself optional), None if nothing was copied (the source erased
    /// or torn).
    #[inline(always)]
    pub fn copy(
        &mut self,
        from: Ppn,
        to: Ppn,
        class: OpClass,
    ) -> Result<Option<Opt<Lpn>>, Violation> {
        let page = self.read(from, class)?;
        let Some(token) = page.token else {
            return Ok(None);
        };
        self.program(to, token, page.spare.lpn, Opt::NONE, class)?;
        Ok(Some(page.spare.lpn))
    }

    /// Copies the pages `from` (each holding data, none in `to`'s block) to the pages from `to` on, in order,
    /// in one call: what [`Nand::copy`] of each does (a page read and a program each, counted as such, a
    /// sequence number each), with the target's checks done once for the run and one block lookup per run of
    /// sources in the same block (a GC victim's pages are all in one): each record is checked and moved whole
    /// in one pass. `from` and `to` are pages of a partition of the chip (a scheme instance's,
    /// `ftl/per_die.rs`): its page `p` is chip page `base + p`, and a page at or beyond its `pages` is refused
    /// as one off the chip (the whole chip: 0 and every page). Returns false, leaving the chip as it was, when
    /// a copy one by one would find a source without data or break a rule: the caller then copies one by one,
    /// and meets the same outcome. Inlined into each caller: left out of line (LLVM's choice once the page
    /// scheme's prefetch hints grew the engine), BAST's merges ran 7 to 10% slower on the throughput bench.
    #[inline(always)]
    pub fn copy_run(
        &mut self,
        from: &[impl SourcePage],
        to: Ppn,
        class: OpClass,
        base: u32,
        pages: u32,
    ) -> bool {
        if to.0 >= pages {
            return false;
        }
        let to = Ppn(base.saturating_add(to.0));
        let (to_block, first) = self.split(to);
        let ppb = self.pages_per_block as usize;
        let (b, first) = (to_block as usize, first as usize);
        if b >= self.blocks.len() || self.is_bad(b) || first + from.len() > ppb {
            return false;
        }
        let target = self.blocks.get(b);
        if self.sequential_program && (first as u32) < target.next_page {
            return false;
        }
        let had_slot = target.slot.is_some();
        // Every programmed page of a block is below its `next_page`: a run from there on needs no look.
        if let Some(slot) = target
            .slot
            .get()
            .filter(|_| (first as u32) < target.next_page)
        {
            let at = slot as usize * ppb + first;
            if self.slab[at..at + from.len()].iter().any(Page::programmed) {
                return false;
            }
        }
        let dst = self.slot_index(b, first);
        // Whether high bits are kept beside the records, of logical pages or of tokens.
        let beside = self.lpn_high.is_kept() || self.token_high.bits() != 0;
        let run = (base, pages, to_block, dst);
        // Runs of records move whole where the sources are mostly one run (a merge's data block, not a GC
        // victim's scattered valid pages: a short run costs a mispredicted branch), no sequence number wraps in
        // the run and no page of the partition passes u32::MAX.
        let whole_runs = in_long_runs(from)
            && self.seq.checked_add(from.len() as u32).is_some()
            && base.checked_add(pages).is_some();
        let (ppb, mask) = (self.pages_per_block, self.pages_per_block - 1);
        let moved = match (self.page_shift, beside) {
            (Some(shift), false) if whole_runs => {
                self.move_record_runs(|p| (p >> shift, p & mask), from, run)
            }
            (Some(shift), false) => {
                self.move_records::<false>(|p| (p >> shift, p & mask), from, run)
            }
            (Some(shift), true) => self.move_records::<true>(|p| (p >> shift, p & mask), from, run),
            (None, _) => self.move_records::<true>(|p| (p / ppb, p % ppb), from, run),
        };
        match moved {
            Ok(seq) => self.seq = seq,
            Err(copied) => {
                self.undo_copies(b, dst, copied, had_slot);
                return false;
            }
        }
        let state = self.blocks.get_mut(b);
        state.next_page = state.next_page.max((first + from.len()) as u32);
        self.counts
            .tally_n(class, |c| &mut c.page_reads, from.len() as u64);
        self.counts
            .tally_n(class, |c| &mut c.page_writes, from.len() as u64);
        true
    }

    /// The records of a run's sources `from` (pages of a partition, [`Nand::copy_run`]'s `base` and `pages`)
    /// moved to the slab's records from `dst` on, none in block `to_block`, each checked as a copy one by one
    /// checks it and given the next sequence number: the last one given, or the first source refused (as many
    /// were moved, which the caller erases). Compiled for each way a page splits into its block and page
    /// (`split`) and for whether high bits are kept beside the records (`BESIDE`), so that the loop tests
    /// neither a page.
    #[inline(always)]
    fn move_records<const BESIDE: bool>(
        &mut self,
        split: impl Fn(u32) -> (u32, u32),
        from: &[impl SourcePage],
        (base, pages, to_block, dst): (u32, u32, u32, usize),
    ) -> Result<u32, usize> {
        let ppb = self.pages_per_block as usize;
        let mut seq = self.seq;
        // Borrowed apart from the chip, so that the loop keeps their addresses in registers.
        let (slab, blocks) = (&mut self.slab[..], &self.blocks);
        let (lpn_high, token_high) = (&mut self.lpn_high, &mut self.token_high);
        // The block of the last source, and where its records begin in the slab (none: it has no slot).
        let (mut block, mut block_at) = (u32::MAX, None);
        for (i, source) in from.iter().enumerate() {
            let ppn = source.page();
            if ppn >= pages {
                return Err(i);
            }
            let (sb, sp) = split(base.saturating_add(ppn));
            if sb != block {
                if sb == to_block || sb as usize >= blocks.len() {
                    return Err(i);
                }
                block = sb;
                block_at = blocks.get(sb as usize).slot.get().map(|s| s as usize * ppb);
            }
            let Some(first) = block_at else {
                return Err(i);
            };
            let at = first + sp as usize;
            let mut record = slab[at];
            if !record.programmed() || record.token == TORN && token_high.get(at) == 0 {
                return Err(i);
            }
            seq = seq.wrapping_add(1).max(1);
            record.seq = seq;
            slab[dst + i] = record;
            if BESIDE {
                lpn_high.copy(at, dst + i);
                token_high.copy(at, dst + i);
            }
        }
        Ok(seq)
    }

    /// [`Nand::move_records`] where no high bits are kept beside the records (a record is all a page holds),
    /// no sequence number wraps in the run and no page of the partition passes `u32::MAX`: each run of sources
    /// at consecutive pages of one block (a merge's data block between its log copies) moves as one copy of
    /// its records, which are then checked and numbered in their new place. On a refusal, the error counts
    /// every record from `dst` on it may have written (the caller erases them).
    #[inline(always)]
    fn move_record_runs(
        &mut self,
        split: impl Fn(u32) -> (u32, u32),
        from: &[impl SourcePage],
        (base, pages, to_block, dst): (u32, u32, u32, usize),
    ) -> Result<u32, usize> {
        let ppb = self.pages_per_block as usize;
        let mut seq = self.seq;
        let (slab, blocks) = (&mut self.slab[..], &self.blocks);
        let mut i = 0;
        while i < from.len() {
            let ppn = from[i].page();
            if ppn >= pages {
                return Err(i);
            }
            let (sb, sp) = split(base + ppn);
            if sb == to_block || sb as usize >= blocks.len() {
                return Err(i);
            }
            let Some(slot) = blocks.get(sb as usize).slot.get() else {
                return Err(i);
            };
            let at = slot as usize * ppb + sp as usize;
            // The sources from here on at consecutive pages of the block and of the partition.
            let room = (ppb - sp as usize)
                .min(from.len() - i)
                .min((pages - ppn) as usize);
            let mut run = 1;
            while run < room && from[i + run].page() == ppn + run as u32 {
                run += 1;
            }
            let out = dst + i;
            slab.copy_within(at..at + run, out);
            for record in &mut slab[out..out + run] {
                if !record.programmed() || record.token == TORN {
                    return Err(i + run);
                }
                seq += 1;
                record.seq = seq;
            }
            i += run;
        }
        Ok(seq)
    }

    /// Takes back the first `copied` copies of a run to block `block` from its slab place `dst` on, and the
    /// slot the run gave the block if it had none: the chip is as it was before the run.
    #[cold]
    #[inline(never)]
    fn undo_copies(&mut self, block: usize, dst: usize, copied: usize, had_slot: bool) {
        self.slab[dst..dst + copied].fill(ERASED_PAGE);
        self.lpn_high.set_none(dst..dst + copied);
        self.token_high.clear(dst..dst + copied);
        if !had_slot {
            let slot = self.blocks.get_mut(block).slot.take();
            self.free_slots.extend(slot);
        }
    }

    /// Keeps token high bits `high` for the slab's record `at` (the first such token keeps high bits for every
    /// record from then on, in as few bits a record as the widest needs; the records hold none before).
    #[cold]
    #[inline(never)]
    fn keep_token_high(&mut self, at: usize, high: u64) {
        if !self.token_high.holds(high) {
            self.token_high.widen(high, self.slab.len());
        }
        self.token_high.set(at, high);
    }

    /// The violation of a program of page `page` of `block` that is off the chip or in a bad block.
    #[cold]
    #[inline(never)]
    fn refused(&self, block: u32, page: u32) -> Violation {
        let what = if block as usize >= self.blocks.len() {
            "program beyond the chip"
        } else {
            "program of a bad block"
        };
        Violation { what, block, page }
    }

    /// A program of `ppn` cut by a power loss halfway: the page is programmed (it cannot be programmed again
    /// until its block is erased, and it takes a sequence number) but reads back as uncorrectable: no data,
    /// no logical page, no scheme word. Not counted: the operation never completed. Nothing happens where the
    /// program would have broken a NAND rule.
    pub fn tear(&mut self, ppn: Ppn) {
        let Ok((b, p)) = self.locate(ppn, "") else {
            return;
        };
        let block = self.blocks.get(b);
        if self.is_bad(b)
            || self.page(b, p).programmed()
            || (self.sequential_program && (p as u32) < block.next_page)
        {
            return;
        }
        self.seq = self.seq.wrapping_add(1).max(1);
        let seq = self.seq;
        let at = self.slot_index(b, p);
        self.slab[at].token = TORN;
        self.slab[at].seq = seq;
        self.set_lpn(at, Opt::NONE);
        let block = self.blocks.get_mut(b);
        block.next_page = block.next_page.max(p as u32 + 1);
    }

    /// Programs part of a spare area on its own (one spare program): sets the scheme word if it is still
    /// erased, and clears flag bits. Setting a programmed scheme word again is a violation.
    pub fn program_spare(
        &mut self,
        ppn: Ppn,
        aux: Option<u32>,
        clear_flags: u8,
        class: OpClass,
    ) -> Result<(), Violation> {
        let (b, p) = self.locate(ppn, "spare program beyond the chip")?;
        if let Some(aux) = aux {
            if self.extras.get(self.blocks.get(b).extras, p).0.is_some() {
                return Err(Violation {
                    what: "spare program of a scheme word that is already programmed",
                    block: b as u32,
                    page: p as u32,
                });
            }
            let at = self.extras.at(&mut self.blocks.get_mut(b).extras, p);
            self.extras.aux[at] = Opt::some(aux);
            self.headers += (p == 0) as u32;
        }
        self.counts.tally(class, |c| &mut c.spare_writes);
        if clear_flags != 0 {
            let at = self.extras.at(&mut self.blocks.get_mut(b).extras, p);
            self.extras.flags[at] &= !clear_flags;
        }
        Ok(())
    }

    /// Erases a block: every page returns to the erased state and the block's erase count goes up by one.
    /// Returns false when the erase failed because the block is worn out ([`Nand::set_endurance`]): it took
    /// the erase's time, its pages keep what they held, and the caller must mark it bad.
    pub fn erase(&mut self, pbn: Pbn, class: OpClass) -> Result<bool, Violation> {
        if pbn.index() >= self.blocks.len() || self.is_bad(pbn.index()) {
            return Err(Violation {
                what: if self.is_bad(pbn.index()) {
                    "erase of a bad block"
                } else {
                    "erase beyond the chip"
                },
                block: pbn.0,
                page: 0,
            });
        }
        if let Some(endurance) = self.endurance {
            let wear = &mut self.wear[pbn.index()];
            if *wear >= endurance {
                self.counts.tally(class, |c| &mut c.erases);
                return Ok(false);
            }
            *wear += 1;
        }
        self.headers -= self.header(pbn.index()).is_some() as u32;
        let block = self.blocks.get_mut(pbn.index());
        block.erase_count += 1;
        block.next_page = 0;
        self.extras.release(&mut block.extras);
        if let Some(slot) = block.slot.take() {
            self.free_slots.push(slot);
        }
        self.counts.tally(class, |c| &mut c.erases);
        Ok(true)
    }

    /// Reads the spare areas of the pages `offsets` of block `pbn`, in order (one spare read each, as
    /// [`Nand::read_spare`] counts it), and sets `lpns[i]` to the logical page the `i`-th holds (none for an
    /// erased or torn page, or one the scheme wrote for itself): a merge's reads of a run of the data block's
    /// pages, with one block lookup for the run.
    pub fn read_spare_lpns(
        &mut self,
        pbn: Pbn,
        offsets: std::ops::Range<u32>,
        class: OpClass,
        lpns: &mut [Opt<Lpn>],
    ) -> Result<(), Violation> {
        debug_assert_eq!(lpns.len(), offsets.len());
        let ppb = self.pages_per_block as usize;
        let first = offsets.start as usize;
        self.check_spare_reads(pbn, offsets.end)?;
        match self.blocks.get(pbn.index()).slot.get() {
            None => lpns.fill(Opt::NONE),
            Some(slot) => {
                let at = slot as usize * ppb + first;
                for (i, lpn) in lpns.iter_mut().enumerate() {
                    *lpn = self.lpn_at(at + i);
                }
            }
        }
        self.counts
            .tally_n(class, |c| &mut c.spare_reads, offsets.len() as u64);
        Ok(())
    }

    /// Reads the spare areas of block `pbn` from page `below - 1` down (one spare read each, as
    /// [`Nand::read_spare`] counts it), telling `visit` each page's offset and logical page (none for an
    /// erased or torn page, or one the scheme wrote for itself), until it returns false or page 0 is read:
    /// a fold's backward scan of a replacement block, with one block lookup. Returns the offset of the last
    /// page read (`below` if none was).
    pub fn scan_spare_lpns_down(
        &mut self,
        pbn: Pbn,
        below: u32,
        class: OpClass,
        mut visit: impl FnMut(u32, Opt<Lpn>) -> bool,
    ) -> Result<u32, Violation> {
        let ppb = self.pages_per_block as usize;
        self.check_spare_reads(pbn, below)?;
        let slot = self.blocks.get(pbn.index()).slot.get();
        let mut at = below;
        while at > 0 {
            at -= 1;
            let lpn = slot.map_or(Opt::NONE, |s| self.lpn_at(s as usize * ppb + at as usize));
            if !visit(at, lpn) {
                break;
            }
        }
        self.counts
            .tally_n(class, |c| &mut c.spare_reads, (below - at) as u64);
        Ok(at)
    }

    /// Spare reads of block `pbn`'s pages below `end` stay on the chip and in the block.
    fn check_spare_reads(&self, pbn: Pbn, end: u32) -> Result<(), Violation> {
        let what = if pbn.index() >= self.blocks.len() {
            "spare read beyond the chip"
        } else if end > self.pages_per_block {
            "spare read beyond the block"
        } else {
            return Ok(());
        };
        Err(Violation {
            what,
            block: pbn.0,
            page: end.max(1) - 1,
        })
    }

    /// What a page holds, without a flash operation (for checks and tests only).
    pub fn peek(&self, ppn: Ppn) -> PageRead {
        let (b, p) = self.split(ppn);
        self.page_read(b as usize, p as usize)
    }
}

/// Whether the sources of a run of copies are mostly one run of consecutive pages: 8 or more, the last as far
/// from the first as in one run. A merge's sources are its data block's pages in order, some replaced by log
/// copies at their offsets; a GC victim's valid pages are not (its invalid ones are missing between them).
#[inline]
fn in_long_runs(from: &[impl SourcePage]) -> bool {
    match (from.first(), from.last()) {
        (Some(first), Some(last)) if from.len() >= 8 => {
            last.page().wrapping_sub(first.page()) as usize == from.len() - 1
        }
        _ => false,
    }
}

/// A slot of the slab for an erased block's pages (at its first program since an erase): a freed one, else
/// a new one; the slab grows geometrically, but never past the chip's `chip_pages`.
#[cold]
#[inline(never)]
fn give_slot(
    slab: &mut Vec<Page>,
    (lpn_high, token_high): (&mut LpnHigh, &mut HighBits),
    free_slots: &mut Vec<u32>,
    ppb: usize,
    chip_pages: usize,
) -> u32 {
    if let Some(slot) = free_slots.pop() {
        let run = slot as usize * ppb..(slot as usize + 1) * ppb;
        slab[run.clone()].fill(ERASED_PAGE);
        lpn_high.set_none(run.clone());
        token_high.clear(run);
        return slot;
    }
    if slab.len() == slab.capacity() {
        let more = slab.len().max(ppb).min(chip_pages - slab.len());
        slab.reserve_exact(more);
        lpn_high.reserve_for(slab.capacity());
    }
    slab.resize(slab.len() + ppb, ERASED_PAGE);
    lpn_high.grow_to(slab.len());
    token_high.grow_to(slab.len());
    (slab.len() / ppb - 1) as u32
}

/// The rule a program of an on-chip page broke, in the order they are checked.
#[cold]
#[inline(never)]
fn broken_program(programmed: bool, out_of_order: bool, block: u32, page_no: u32) -> Violation {
    let what = if programmed {
        "program of a page that is already programmed (erase the block first)"
    } else if out_of_order {
        "out-of-order program (sequential_program: pages of a block must be programmed in increasing order)"
    } else {
        "program of a spare word that is already programmed"
    };
    Violation {
        what,
        block,
        page: page_no,
    }
}

#[cfg(test)]
mod tests {
    use super::lpn_high::LOW_NONE as LPN_LOW_NONE;
    use super::*;

    const D: OpClass = OpClass::Data;

    #[test]
    fn a_torn_page_reads_uncorrectable_and_cannot_be_programmed_again() {
        let mut chip = Nand::new(2, 4, true);
        chip.program(Ppn(0), 7, Opt::some(Lpn(3)), Opt::NONE, D)
            .unwrap();
        chip.tear(Ppn(1));
        let torn = chip.read(Ppn(1), D).unwrap();
        assert_eq!(
            (torn.token, torn.spare.lpn(), torn.spare.aux()),
            (None, None, None)
        );
        assert_ne!(torn.spare.seq, 0);
        assert!(chip
            .program(Ppn(1), 8, Opt::some(Lpn(4)), Opt::NONE, D)
            .is_err());
        // The in-order rule goes on from the torn page; a program that would break a rule is not torn.
        chip.tear(Ppn(0));
        assert_eq!(chip.read(Ppn(0), D).unwrap().token, Some(7));
        chip.program(Ppn(2), 9, Opt::some(Lpn(5)), Opt::NONE, D)
            .unwrap();
        assert_eq!(chip.total_counts().page_writes, 2);
    }

    #[test]
    fn prefetch_hints_count_nothing_and_accept_any_address() {
        let mut chip = Nand::new(2, 4, true);
        chip.program(Ppn(5), 1, Opt::some(Lpn(0)), Opt::NONE, D)
            .unwrap();
        // A programmed page, an erased block, the last page of the chip, and addresses past the chip.
        for ppn in [5, 0, 7, 8, u32::MAX] {
            chip.prefetch(Ppn(ppn));
        }
        for pbn in [1, 0, 2, u32::MAX] {
            chip.prefetch_block(Pbn(pbn));
        }
        let c = chip.total_counts();
        assert_eq!((c.page_reads, c.spare_reads, c.page_writes), (0, 0, 1));
        assert_eq!(chip.read(Ppn(5), D).unwrap().token, Some(1));
    }

    #[test]
    fn tokens_past_32_bits_read_back_whole_copied_one_by_one_or_in_a_run_and_beside_torn_pages() {
        let mut chip = Nand::new(4, 8, true);
        // The widest token a record's word holds, the first that needs high bits, two whose kept word is all
        // ones (a torn page's, but with high bits: the second the widest of 2 bits), then wider ones up to the
        // widest below 2^63.
        let tokens: [Token; 7] = [
            TORN as Token - 1,
            TORN as Token,
            (1 << 33) - 2,
            (1 << 34) - 2,
            (1 << 34) - 1,
            1 << 40,
            (1 << 63) - 1,
        ];
        let mut widths = Vec::new();
        for (p, &token) in tokens.iter().enumerate() {
            chip.program(Ppn(p as u32), token, Opt::some(Lpn(p as u32)), Opt::NONE, D)
                .unwrap();
            widths.push(chip.token_high.bits());
        }
        assert_eq!(
            widths,
            [0, 2, 2, 2, 4, 16, 32],
            "as few bits a record as the widest needs"
        );
        chip.tear(Ppn(7));
        assert_eq!(chip.peek(Ppn(7)).token, None, "torn");
        for (p, &token) in tokens.iter().enumerate() {
            assert_eq!(chip.read(Ppn(p as u32), D).unwrap().token, Some(token));
        }
        // One by one to block 1, in a run to block 2: the same tokens.
        let from: Vec<Ppn> = (0..7).map(Ppn).collect();
        for &source in &from {
            chip.copy(source, Ppn(8 + source.0), D).unwrap();
        }
        assert!(chip.copy_run(&from, Ppn(16), D, 0, 32), "no source is torn");
        for (p, &token) in tokens.iter().enumerate() {
            for block in [1, 2] {
                assert_eq!(chip.peek(Ppn(8 * block + p as u32)).token, Some(token));
            }
        }
        assert!(
            !chip.copy_run(&[Ppn(7)], Ppn(24), D, 0, 32),
            "a torn source"
        );
        // A slot given again holds no high bits: narrow tokens and a torn page read as they were written.
        chip.erase(Pbn(0), D).unwrap();
        chip.program(Ppn(25), 7, Opt::some(Lpn(1)), Opt::NONE, D)
            .unwrap();
        for (p, token) in [(0, 5), (1, TORN as Token - 1)] {
            chip.program(Ppn(p), token, Opt::some(Lpn(p)), Opt::NONE, D)
                .unwrap();
        }
        chip.tear(Ppn(2));
        assert_eq!(
            [0, 1, 2, 9, 19, 22, 25].map(|p| chip.peek(Ppn(p)).token),
            [
                Some(5),
                Some(TORN as Token - 1),
                None,
                Some(tokens[1]),
                Some(tokens[3]),
                Some(tokens[6]),
                Some(7)
            ]
        );
    }

    #[test]
    fn a_run_of_copies_does_what_the_copies_one_by_one_do_or_nothing() {
        // Two chips with the same pages; one copies a run at once, the other page by page.
        let fill = || {
            let mut chip = Nand::new(4, 4, true);
            for (p, token) in [(0, 5), (1, 1 << 35), (2, 7)] {
                chip.program(Ppn(p), token, Opt::some(Lpn(p + 10)), Opt::NONE, D)
                    .unwrap();
            }
            chip.program(Ppn(8), 9, Opt::some(Lpn(20)), Opt::NONE, D)
                .unwrap();
            chip
        };
        let (mut at_once, mut one_by_one) = (fill(), fill());
        let from = [Ppn(2), Ppn(1), Ppn(8)];
        assert!(at_once.copy_run(&from, Ppn(13), D, 0, 16));
        for (i, &source) in from.iter().enumerate() {
            one_by_one.copy(source, Ppn(13 + i as u32), D).unwrap();
        }
        for ppn in 12..16 {
            assert_eq!(at_once.peek(Ppn(ppn)), one_by_one.peek(Ppn(ppn)));
        }
        let (a, b) = (at_once.total_counts(), one_by_one.total_counts());
        assert_eq!((a.page_reads, a.page_writes), (3, 7));
        assert_eq!((a.page_reads, a.page_writes), (b.page_reads, b.page_writes));
        assert_eq!(at_once.seq, one_by_one.seq);
        // Refused, nothing done: a source erased or torn, a target programmed, behind the in-order frontier,
        // past the block's end, in a source's block, or off the chip.
        at_once.tear(Ppn(3));
        for (from, to) in [
            (&[Ppn(4)][..], Ppn(9)),
            (&[Ppn(3)][..], Ppn(9)),
            (&[Ppn(0), Ppn(2)][..], Ppn(8)),
            (&[Ppn(0)][..], Ppn(12)),
            (&[Ppn(0), Ppn(2)][..], Ppn(15)),
            (&[Ppn(0)][..], Ppn(2)),
            (&[Ppn(0)][..], Ppn(16)),
        ] {
            assert!(!at_once.copy_run(from, to, D, 0, 16), "{from:?} to {to:?}");
        }
        assert_eq!(at_once.total_counts(), a);
    }

    #[test]
    fn a_long_run_of_copies_moves_whole_runs_of_records_as_the_copies_one_by_one_do_or_nothing() {
        // 16 pages a block: block 0 full, block 1 with 4 pages (a merge's log copies), block 2 with its page 9
        // erased between programmed ones.
        let fill = || {
            let mut chip = Nand::new(6, 16, true);
            for p in (0..20).chain(32..41).chain(42..46) {
                chip.program(
                    Ppn(p),
                    100 + p as Token,
                    Opt::some(Lpn(p + 7)),
                    Opt::NONE,
                    D,
                )
                .unwrap();
            }
            chip
        };
        // Twelve sources from block 0 in order, two replaced by log copies in block 1 at their offsets: one
        // run of consecutive pages as far as first and last go, so the records move in runs.
        let mut from: Vec<Ppn> = (2..14).map(Ppn).collect();
        (from[3], from[7]) = (Ppn(17), Ppn(16));
        assert!(in_long_runs(&from));
        // From the wrap of the sequence numbers too, where the records move one by one.
        for seq in [9, u32::MAX - 4] {
            let (mut at_once, mut one_by_one) = (fill(), fill());
            (at_once.seq, one_by_one.seq) = (seq, seq);
            assert!(at_once.copy_run(&from, Ppn(66), D, 0, 96));
            for (i, &source) in from.iter().enumerate() {
                one_by_one.copy(source, Ppn(66 + i as u32), D).unwrap();
            }
            for ppn in 64..80 {
                assert_eq!(
                    at_once.peek(Ppn(ppn)),
                    one_by_one.peek(Ppn(ppn)),
                    "page {ppn}"
                );
            }
            assert_eq!(at_once.total_counts(), one_by_one.total_counts());
            assert_eq!(at_once.seq, one_by_one.seq);
        }
        // Refused mid-run, each the one fault of its run, the chip as it was: a torn source, an erased one,
        // one in the target block; the targets in block 4, whose first 8 pages are programmed (records
        // moved into it are erased again), or in block 5, which has no slot.
        let run = |pages: std::ops::Range<u32>| pages.map(Ppn).collect::<Vec<_>>();
        let mut chip = fill();
        chip.tear(Ppn(20));
        for p in (21..26).chain(48..72) {
            chip.program(Ppn(p), 1, Opt::some(Lpn(p)), Opt::NONE, D)
                .unwrap();
        }
        let (counts, seq) = (chip.total_counts(), chip.seq);
        for (from, to, pages) in [
            (run(16..24), Ppn(72), 96),
            (run(34..46), Ppn(82), 96),
            (run(60..68), Ppn(72), 96),
        ] {
            assert!(in_long_runs(&from));
            assert!(!chip.copy_run(&from, to, D, 0, pages), "{from:?} to {to:?}");
            assert_eq!((chip.total_counts(), chip.seq), (counts, seq));
            assert!(
                chip.slab_index(5, 0).is_none(),
                "the target's slot is given back"
            );
            for ppn in (72..96).chain(26..32) {
                assert_eq!(chip.peek(Ppn(ppn)).spare.seq, 0, "page {ppn} is erased");
            }
        }
        // And one beyond the partition's 24 pages, from a full block 1 to block 0.
        let mut chip = Nand::new(4, 16, true);
        for p in 16..32 {
            chip.program(Ppn(p), 1, Opt::some(Lpn(p)), Opt::NONE, D)
                .unwrap();
        }
        let counts = chip.total_counts();
        assert!(!chip.copy_run(&run(16..26), Ppn(2), D, 0, 24));
        assert_eq!(chip.total_counts(), counts);
        assert!(
            chip.slab_index(0, 0).is_none(),
            "the target's slot is given back"
        );
        // Not one run: a GC victim's valid pages with gaps between, or too few.
        assert!(!in_long_runs(&[
            Ppn(0),
            Ppn(2),
            Ppn(3),
            Ppn(5),
            Ppn(6),
            Ppn(7),
            Ppn(8),
            Ppn(9)
        ]));
        assert!(!in_long_runs(&run(0..7)));
        assert!(!in_long_runs(&run(0..0)));
    }

    #[test]
    fn a_run_of_copies_in_a_partition_moves_its_pages_and_refuses_pages_beyond_it() {
        // The partition of blocks 2 and 3: its page p is chip page 8 + p.
        let mut chip = Nand::new(4, 4, true);
        chip.program(Ppn(8), 5, Opt::some(Lpn(1)), Opt::NONE, D)
            .unwrap();
        chip.program(Ppn(9), 6, Opt::some(Lpn(2)), Opt::NONE, D)
            .unwrap();
        let before = chip.total_counts();
        // Refused: a source beyond the partition's 8 pages (chip page 16, off the chip), the target beyond it.
        for (from, to) in [(&[Ppn(8)][..], Ppn(4)), (&[Ppn(0)][..], Ppn(8))] {
            assert!(!chip.copy_run(from, to, D, 8, 8), "{from:?} to {to:?}");
        }
        assert_eq!(chip.total_counts(), before);
        assert!(chip.copy_run(&[Ppn(1), Ppn(0)], Ppn(4), D, 8, 8));
        assert_eq!(chip.peek(Ppn(12)).token, Some(6));
        assert_eq!(chip.peek(Ppn(13)).token, Some(5));
        assert_eq!(chip.peek(Ppn(13)).spare.lpn(), Some(Lpn(1)));
        assert_eq!(
            chip.peek(Ppn(4)).token,
            None,
            "the chip's own page 4 is not the partition's"
        );
        let c = chip.total_counts();
        assert_eq!((c.page_reads, c.page_writes), (2, 4));
    }

    /// 3 blocks of 4 pages. Block 1: page 4 holds lpn 10, page 5 is torn, page 6 is erased, page 7 holds lpn
    /// 12 with a scheme word; block 2 is erased.
    fn torn_and_erased_pages() -> Nand {
        let mut chip = Nand::new(3, 4, false);
        chip.program(Ppn(4), 1, Opt::some(Lpn(10)), Opt::NONE, D)
            .unwrap();
        chip.tear(Ppn(5));
        chip.program(Ppn(7), 2, Opt::some(Lpn(12)), Opt::some(9), D)
            .unwrap();
        chip
    }

    #[test]
    fn spare_reads_of_a_run_at_once_give_what_reads_one_by_one_give() {
        let mut chip = torn_and_erased_pages();
        let mut lpns = [Opt::some(Lpn(99)); 4];
        chip.read_spare_lpns(Pbn(1), 0..4, D, &mut lpns).unwrap();
        let one_by_one = [4, 5, 6, 7].map(|p| chip.read_spare(Ppn(p), D).unwrap().lpn);
        assert_eq!(lpns, one_by_one);
        assert_eq!(
            lpns,
            [Opt::some(Lpn(10)), Opt::NONE, Opt::NONE, Opt::some(Lpn(12))]
        );
        chip.read_spare_lpns(Pbn(1), 3..4, D, &mut lpns[..1])
            .unwrap();
        chip.read_spare_lpns(Pbn(2), 1..3, D, &mut lpns[1..3])
            .unwrap();
        assert_eq!(
            lpns,
            [Opt::some(Lpn(12)), Opt::NONE, Opt::NONE, Opt::some(Lpn(12))]
        );
        assert_eq!(chip.total_counts().spare_reads, 11);
        // Off the chip or past the block's end: a violation, nothing counted.
        assert!(chip
            .read_spare_lpns(Pbn(3), 0..1, D, &mut lpns[..1])
            .is_err());
        assert!(chip
            .read_spare_lpns(Pbn(1), 2..5, D, &mut lpns[..3])
            .is_err());
        assert_eq!(chip.total_counts().spare_reads, 11);
    }

    #[test]
    fn a_backward_scan_reads_what_reads_one_by_one_give_until_told_to_stop() {
        let mut chip = torn_and_erased_pages();
        let mut seen = Vec::new();
        let at = chip
            .scan_spare_lpns_down(Pbn(1), 4, D, |o, lpn| {
                seen.push((o, lpn));
                true
            })
            .unwrap();
        let one_by_one: Vec<_> = (0..4)
            .rev()
            .map(|o| (o, chip.read_spare(Ppn(4 + o), D).unwrap().lpn))
            .collect();
        assert_eq!((at, &seen), (0, &one_by_one));
        assert_eq!(seen[0], (3, Opt::some(Lpn(12))));
        assert_eq!(chip.total_counts().spare_reads, 8);
        // Told to stop at the torn page (offset 1), from below offset 3: offsets 2 and 1 read.
        let at = chip
            .scan_spare_lpns_down(Pbn(1), 3, D, |o, _| o != 1)
            .unwrap();
        assert_eq!(at, 1);
        assert_eq!(chip.total_counts().spare_reads, 10);
        // An erased block reads as erased; nothing below 0 is read; off the chip or past the block: refused.
        let mut erased = 0;
        let at = chip
            .scan_spare_lpns_down(Pbn(2), 2, D, |_, lpn| {
                erased += lpn.is_none() as u32;
                true
            })
            .unwrap();
        assert_eq!((at, erased), (0, 2));
        assert_eq!(chip.scan_spare_lpns_down(Pbn(2), 0, D, |_, _| true), Ok(0));
        assert!(chip
            .scan_spare_lpns_down(Pbn(3), 1, D, |_, _| true)
            .is_err());
        assert!(chip
            .scan_spare_lpns_down(Pbn(1), 5, D, |_, _| true)
            .is_err());
        assert_eq!(chip.total_counts().spare_reads, 12);
    }

    #[test]
    fn scheme_words_and_flags_take_memory_only_in_blocks_that_carry_them() {
        let mut chip = Nand::new(3, 4, false);
        chip.program(Ppn(0), 1, Opt::some(Lpn(0)), Opt::NONE, D)
            .unwrap();
        assert!(chip.extras.aux.is_empty());
        chip.program(Ppn(5), 2, Opt::some(Lpn(1)), Opt::some(9), D)
            .unwrap();
        chip.program_spare(Ppn(10), None, 0b1, D).unwrap();
        assert_eq!(chip.extras.aux.len(), 2 * 4);
        assert!(
            chip.extras.directories.is_empty(),
            "a block of one chunk names it"
        );
        assert_eq!(chip.peek(Ppn(5)).spare.aux(), Some(9));
        assert_eq!(chip.peek(Ppn(4)).spare, Spare::ERASED);
        assert_eq!(chip.peek(Ppn(10)).spare.flags, 0xFE);
        // An erase gives the run back, erased, to the next block that needs one.
        chip.erase(Pbn(1), D).unwrap();
        chip.program_spare(Ppn(2), None, 0b10, D).unwrap();
        assert_eq!(chip.extras.aux.len(), 2 * 4);
        assert_eq!(chip.peek(Ppn(1)).spare.flags, FLAGS_ERASED);
        assert_eq!(chip.peek(Ppn(2)).spare.flags, 0xFD);
        assert_eq!(chip.peek(Ppn(5)).spare.aux(), None);
    }

    #[test]
    fn scheme_words_and_flags_of_large_blocks_take_memory_only_in_chunks_that_carry_them() {
        // Blocks of 160 pages: chunks of 64 pages, 3 a block (the last of 32).
        let mut chip = Nand::new(3, 160, false);
        chip.program(Ppn(160 + 5), 2, Opt::some(Lpn(1)), Opt::some(9), D)
            .unwrap();
        chip.program_spare(Ppn(320 + 150), None, 0b1, D).unwrap();
        chip.program_spare(Ppn(320 + 129), None, 0b100, D).unwrap();
        assert_eq!(
            chip.extras.aux.len(),
            2 * EXTRAS_CHUNK,
            "a chunk in each of two blocks"
        );
        assert_eq!(chip.extras.directories.len(), 2 * 3);
        assert_eq!(chip.peek(Ppn(160 + 5)).spare.aux(), Some(9));
        assert_eq!(chip.peek(Ppn(160 + 4)).spare, Spare::ERASED);
        assert_eq!(
            chip.peek(Ppn(160 + 100)).spare,
            Spare::ERASED,
            "a page without a chunk"
        );
        assert_eq!(chip.peek(Ppn(320 + 150)).spare.flags, 0xFE);
        assert_eq!(chip.peek(Ppn(320 + 129)).spare.flags, 0xFB);
        assert_eq!(chip.peek(Ppn(320 + 128)).spare.flags, FLAGS_ERASED);
        // An erase gives its chunks and directory back, erased, to the next block that needs them.
        chip.erase(Pbn(1), D).unwrap();
        chip.program_spare(Ppn(2), None, 0b10, D).unwrap();
        chip.program_spare(Ppn(70), None, 0b10, D).unwrap();
        assert_eq!(chip.extras.aux.len(), 3 * EXTRAS_CHUNK);
        assert_eq!(chip.extras.directories.len(), 2 * 3);
        assert_eq!(chip.peek(Ppn(1)).spare.flags, FLAGS_ERASED);
        assert_eq!(
            (
                chip.peek(Ppn(2)).spare.flags,
                chip.peek(Ppn(70)).spare.flags
            ),
            (0xFD, 0xFD)
        );
        assert_eq!(chip.peek(Ppn(160 + 5)).spare.aux(), None);
        assert_eq!(chip.peek(Ppn(320 + 150)).spare.flags, 0xFE);
    }

    #[test]
    fn a_page_is_11_bytes_and_a_block_state_16() {
        assert_eq!(std::mem::size_of::<Page>(), 11);
        assert_eq!(std::mem::size_of::<BlockState>(), 16);
    }

    /// A drive of 2^26 pages (512 GiB of 8 KiB pages) keeps 2 bits a record past the first 24: its logical
    /// pages up to 2^26 - 2 read back through programs, a run of copies, a spare scan and a reused slot; the
    /// first that needs more (2^26 - 1, whose 26 bits are the none) widens the records to 4 bits a record,
    /// and every record still holds what it held.
    #[test]
    fn a_512_gib_drive_keeps_2_bits_a_record_past_24() {
        let mut chip = Nand::new(1 << 24, 4, true);
        let lpns = [Some(1 << 24), None, Some(LPN_LOW_NONE), Some((1 << 26) - 2)];
        for (p, lpn) in lpns.iter().enumerate() {
            chip.program(
                Ppn(p as u32),
                1 + p as Token,
                Opt::from(lpn.map(Lpn)),
                Opt::NONE,
                D,
            )
            .unwrap();
        }
        // 2 bits for each of the slab's 4 records: a byte.
        assert_eq!(chip.lpn_high.heap_bytes(), 1);
        let sources = [Ppn(0), Ppn(1), Ppn(2), Ppn(3)];
        assert!(chip.copy_run(&sources, Ppn(4), D, 0, u32::MAX));
        let mut read = [Opt::NONE; 4];
        chip.read_spare_lpns(Pbn(1), 0..4, D, &mut read).unwrap();
        assert_eq!(read.map(|l| l.get()), lpns.map(|l| l.map(Lpn)));
        chip.erase(Pbn(0), D).unwrap();
        chip.program(Ppn(8), 9, Opt::some(Lpn((1 << 26) - 1)), Opt::NONE, D)
            .unwrap();
        assert!(chip.lpn_high.heap_bytes() >= 4, "4 bits a record now");
        chip.read_spare_lpns(Pbn(1), 0..4, D, &mut read).unwrap();
        assert_eq!(read.map(|l| l.get()), lpns.map(|l| l.map(Lpn)));
        assert_eq!(chip.peek(Ppn(8)).spare.lpn(), Some(Lpn((1 << 26) - 1)));
        assert_eq!(chip.peek(Ppn(9)).spare.lpn(), None);
        chip.program(Ppn(0), 10, Opt::some(Lpn(7)), Opt::NONE, D)
            .unwrap();
        assert_eq!(chip.peek(Ppn(0)).spare.lpn(), Some(Lpn(7)), "a reused slot");
        assert_eq!(
            chip.peek(Ppn(1)).spare.lpn(),
            None,
            "a reused slot reads erased"
        );
    }

    #[test]
    fn logical_pages_past_24_bits_read_back_whole_copied_or_not() {
        // A chip of 2^25 pages (allocated only where programmed); the records keep high bytes from the first
        // logical page that needs one, 2^24 - 1 (the narrow records' none) included.
        let mut chip = Nand::new(1 << 23, 4, true);
        let lpns = [
            Some(LPN_LOW_NONE - 1),
            None,
            Some(LPN_LOW_NONE),
            Some(u32::MAX - 1),
        ];
        chip.program(Ppn(0), 1, Opt::from(lpns[0].map(Lpn)), Opt::NONE, D)
            .unwrap();
        chip.program(Ppn(1), 2, Opt::NONE, Opt::NONE, D).unwrap();
        assert!(
            !chip.lpn_high.is_kept(),
            "24 bits and none need no high bits"
        );
        for (p, lpn) in lpns.iter().enumerate().skip(2) {
            let ppn = Ppn((1 << 24) + p as u32);
            chip.program(ppn, 10 + p as Token, Opt::from(lpn.map(Lpn)), Opt::NONE, D)
                .unwrap();
        }
        assert!(chip.lpn_high.is_kept());
        chip.program(Ppn(2), 3, Opt::some(Lpn(1 << 24)), Opt::NONE, D)
            .unwrap();
        assert_eq!(chip.peek(Ppn(2)).spare.lpn(), Some(Lpn(1 << 24)));
        assert_eq!(chip.peek(Ppn(3)).spare.lpn(), None, "an erased page");
        let sources = [Ppn(0), Ppn(1), Ppn((1 << 24) + 2), Ppn((1 << 24) + 3)];
        assert!(chip.copy_run(&sources, Ppn(8), D, 0, u32::MAX));
        for (i, (&source, lpn)) in sources.iter().zip(lpns).enumerate() {
            let (original, copy) = (chip.peek(source), chip.peek(Ppn(8 + i as u32)));
            assert_eq!(original.spare.lpn(), lpn.map(Lpn));
            assert_eq!(
                (copy.token, copy.spare.lpn()),
                (original.token, lpn.map(Lpn))
            );
        }
        chip.copy(Ppn((1 << 24) + 3), Ppn(12), D).unwrap();
        assert_eq!(chip.peek(Ppn(12)).spare.lpn(), Some(Lpn(u32::MAX - 1)));
        let mut read = [Opt::NONE; 4];
        chip.read_spare_lpns(Pbn(2), 0..4, D, &mut read).unwrap();
        assert_eq!(read.map(|l| l.get()), lpns.map(|l| l.map(Lpn)));
        chip.erase(Pbn(2), D).unwrap();
        chip.program(Ppn(9), 4, Opt::some(Lpn(5)), Opt::NONE, D)
            .unwrap();
        assert_eq!(
            chip.peek(Ppn(8)).spare.lpn(),
            None,
            "a reused slot reads erased"
        );
        assert_eq!(chip.peek(Ppn(9)).spare.lpn(), Some(Lpn(5)));
    }

    #[test]
    fn a_refused_run_of_copies_leaves_the_chip_as_it_was() {
        let mut chip = Nand::new(4, 4, true);
        chip.program(Ppn(0), 5, Opt::some(Lpn(1)), Opt::NONE, D)
            .unwrap();
        chip.tear(Ppn(1));
        // Page 0 is copied before the torn page 1 is met: the copy is taken back, and block 2 has no slot again.
        assert!(!chip.copy_run(&[Ppn(0), Ppn(1)], Ppn(8), D, 0, 16));
        assert!(!chip.copy_run(&[Ppn(0), Ppn(1)], Ppn(8), D, 0, 16));
        assert_eq!(chip.peek(Ppn(8)), Nand::new(1, 4, true).peek(Ppn(0)));
        assert!(chip.slab_index(2, 0).is_none());
        let c = chip.total_counts();
        assert_eq!((c.page_reads, c.page_writes), (0, 1));
        // The one-by-one copy copies page 0 and skips the torn page; the sequence goes on from the tear, and
        // block 2 takes the slot the run gave back (the slab does not grow again).
        let after = chip.heap_bytes();
        chip.copy(Ppn(0), Ppn(8), D).unwrap();
        assert_eq!(chip.copy(Ppn(1), Ppn(9), D).unwrap(), None);
        assert_eq!(chip.peek(Ppn(8)).spare.seq, 3);
        assert_eq!(chip.heap_bytes(), after);
    }

    #[test]
    fn programmed_pages_cannot_be_programmed_again_until_erased() {
        let mut chip = Nand::new(4, 4, false);
        chip.program(Ppn(5), 11, Opt::some(Lpn(3)), Opt::NONE, D)
            .unwrap();
        let err = chip
            .program(Ppn(5), 12, Opt::some(Lpn(3)), Opt::NONE, D)
            .unwrap_err();
        assert_eq!((err.block, err.page), (1, 1));
        assert_eq!(chip.read(Ppn(5), D).unwrap().token, Some(11));
        assert_eq!(chip.read(Ppn(5), D).unwrap().spare.lpn(), Some(Lpn(3)));
        chip.erase(Pbn(1), D).unwrap();
        assert_eq!(chip.read(Ppn(5), D).unwrap().token, None);
        chip.program(Ppn(5), 12, Opt::some(Lpn(3)), Opt::NONE, D)
            .unwrap();
        assert_eq!(chip.erase_count(Pbn(1)), 1);
        let c = chip.total_counts();
        assert_eq!((c.page_writes, c.page_reads, c.erases), (2, 3, 1));
    }

    #[test]
    fn out_of_range_operations_are_violations() {
        let mut chip = Nand::new(2, 4, false);
        assert_eq!(chip.read(Ppn(8), D).unwrap_err().block, 2);
        assert!(chip.read_spare(Ppn(100), D).is_err());
        assert!(chip
            .program(Ppn(8), 1, Opt::some(Lpn(0)), Opt::NONE, D)
            .is_err());
        assert!(chip.erase(Pbn(2), D).is_err());
        assert_eq!(chip.total_counts().erases, 0);
    }

    #[test]
    fn sequential_rule_forbids_going_back_within_a_block() {
        let mut chip = Nand::new(2, 4, true);
        chip.program(Ppn(0), 1, Opt::some(Lpn(0)), Opt::NONE, D)
            .unwrap();
        chip.program(Ppn(2), 2, Opt::some(Lpn(2)), Opt::NONE, D)
            .unwrap();
        let err = chip
            .program(Ppn(1), 3, Opt::some(Lpn(1)), Opt::NONE, D)
            .unwrap_err();
        assert!(err.what.contains("out-of-order"));
        let mut slc = Nand::new(2, 4, false);
        slc.program(Ppn(2), 2, Opt::some(Lpn(2)), Opt::NONE, D)
            .unwrap();
        slc.program(Ppn(1), 3, Opt::some(Lpn(1)), Opt::NONE, D)
            .unwrap();
    }

    #[test]
    fn spare_words_are_write_once_and_flags_only_clear() {
        let mut chip = Nand::new(2, 4, false);
        chip.program_spare(Ppn(0), Some(7), 0, D).unwrap();
        assert!(chip.program_spare(Ppn(0), Some(8), 0, D).is_err());
        chip.program(Ppn(0), 1, Opt::some(Lpn(0)), Opt::NONE, D)
            .unwrap();
        chip.program_spare(Ppn(0), None, 0b10, D).unwrap();
        chip.program_spare(Ppn(0), None, 0b01, D).unwrap();
        let s = chip.read_spare(Ppn(0), D).unwrap();
        assert_eq!((s.aux(), s.flags, s.lpn()), (Some(7), 0xFC, Some(Lpn(0))));
        assert_eq!(chip.total_counts().spare_writes, 3);
        assert_eq!(chip.total_counts().spare_reads, 1);
    }

    #[test]
    fn a_header_read_gives_page_0s_scheme_word_as_one_spare_read() {
        let mut chip = Nand::new(3, 4, false);
        // Block 0: the word comes with the program; block 1: with a spare program; block 2: on page 1 only.
        chip.program(Ppn(0), 1, Opt::some(Lpn(0)), Opt::some(41), D)
            .unwrap();
        chip.program_spare(Ppn(4), Some(42), 0, D).unwrap();
        chip.program(Ppn(9), 2, Opt::some(Lpn(1)), Opt::some(43), D)
            .unwrap();
        let headers: Vec<_> = (0..3)
            .map(|b| chip.read_header(Pbn(b), D).unwrap())
            .collect();
        assert_eq!(headers, vec![Some(41), Some(42), None]);
        for b in 0..3 {
            assert_eq!(
                chip.read_header(Pbn(b), D).unwrap(),
                chip.read_spare(Ppn(b * 4), D).unwrap().aux()
            );
        }
        assert_eq!(chip.total_counts().spare_reads, 9);
        chip.erase(Pbn(1), D).unwrap();
        assert_eq!(chip.read_header(Pbn(1), D).unwrap(), None);
        let off = chip.read_header(Pbn(3), D).unwrap_err();
        assert_eq!((off.what, off.block), ("spare read beyond the chip", 3));
        assert_eq!(chip.total_counts().spare_reads, 10);
    }

    #[test]
    fn a_scan_of_headers_is_counted_only_when_the_holders_are_exactly_the_blocks_with_one() {
        let mut chip = Nand::new(4, 4, false);
        chip.program(Ppn(0), 1, Opt::some(Lpn(0)), Opt::some(41), D)
            .unwrap();
        chip.program_spare(Ppn(8), Some(42), 0, D).unwrap();
        // Block 3 has a scheme word on page 1, which is no header.
        chip.program(Ppn(13), 2, Opt::some(Lpn(1)), Opt::some(43), D)
            .unwrap();
        // A holder without a header, a missing holder, more holders than reads, a block beyond the chip:
        // refused, nothing counted.
        let refused = |chip: &mut Nand, scanned, holders: &[Pbn]| {
            chip.confirm_headers(scanned, holders, D).unwrap_err().what
        };
        let none = "header scan: a block named as holding a header holds none";
        let unnamed = "header scan: blocks hold a header that the scan does not name";
        assert_eq!(refused(&mut chip, 4, &[Pbn(0), Pbn(1)]), none);
        assert_eq!(refused(&mut chip, 4, &[Pbn(0)]), unnamed);
        let missed = chip.confirm_headers(4, &[Pbn(2)], D).unwrap_err();
        assert_eq!((missed.what, missed.block), (unnamed, 0));
        assert_eq!(
            refused(&mut chip, 1, &[Pbn(0), Pbn(2)]),
            "header scan: more blocks named as holding a header than headers read"
        );
        assert_eq!(refused(&mut chip, 4, &[Pbn(0), Pbn(9)]), none);
        assert_eq!(chip.total_counts().spare_reads, 0);
        chip.confirm_headers(4, &[Pbn(2), Pbn(0)], D).unwrap();
        assert_eq!(chip.total_counts().spare_reads, 4);
        // An erase takes the header away; a failed erase of a worn-out block keeps it.
        chip.erase(Pbn(0), D).unwrap();
        chip.confirm_headers(3, &[Pbn(2)], OpClass::Map).unwrap();
        assert_eq!(chip.total_counts().spare_reads, 7);
        assert_eq!(chip.counts(OpClass::Map).spare_reads, 3);
        chip.set_endurance(0);
        assert!(!chip.erase(Pbn(2), D).unwrap());
        chip.confirm_headers(3, &[Pbn(2)], D).unwrap();
        // Marked bad, it keeps its header, but no scan of the scheme's blocks reads it: naming it is refused,
        // and a scan without it is confirmed (a factory-bad block, with no header, changes nothing).
        chip.mark_bad(Pbn(2), 1, Some(D));
        chip.mark_bad(Pbn(1), FACTORY_BAD, None);
        assert_eq!(chip.header(2).get(), Some(42));
        assert_eq!(refused(&mut chip, 2, &[Pbn(2)]), none);
        let before = chip.total_counts().spare_reads;
        chip.confirm_headers(2, &[], D).unwrap();
        assert_eq!(chip.total_counts().spare_reads, before + 2);
        // A header on a good block is still required to be named.
        chip.program_spare(Ppn(0), Some(44), 0, D).unwrap();
        assert_eq!(refused(&mut chip, 2, &[]), unnamed);
        chip.confirm_headers(2, &[Pbn(0)], D).unwrap();
    }

    #[test]
    fn memory_follows_programmed_blocks_not_device_size() {
        // A 16 GiB device of 2 KiB pages, 128 a block: 65,536 blocks.
        let mut chip = Nand::new(65_536, 128, true);
        for b in 0..10u32 {
            chip.program(
                Ppn(b * 1000 * 128),
                b as u64 + 1,
                Opt::some(Lpn(b)),
                Opt::NONE,
                D,
            )
            .unwrap();
        }
        assert!(chip.heap_bytes() < 2 << 20, "{}", chip.heap_bytes());
        chip.erase(Pbn(0), D).unwrap();
        chip.program(Ppn(77 * 128), 99, Opt::some(Lpn(0)), Opt::NONE, D)
            .unwrap();
        assert_eq!(
            chip.slab.len(),
            10 * 128,
            "an erased block's slot is reused"
        );
    }
}
