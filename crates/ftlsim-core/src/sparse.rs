//! A vector indexed by dense integers whose memory grows with the entries actually touched: chunks are
//! allocated on first write. Real traces address 100+ GiB volumes and touch a few GiB, so per-logical-page
//! tables (the integrity shadow map, page maps) use this instead of a flat `Vec`. The last chunk holds only
//! the entries up to the length: a table smaller than a chunk (a small chip's block states) costs its size.

use crate::cache_hint::prefetch;
use std::ops::Range;

const CHUNK_BITS: u32 = 12;
const CHUNK: usize = 1 << CHUNK_BITS;

#[derive(Clone, Debug)]
pub struct SparseVec<T: Copy> {
    /// `CHUNK` entries each, but the last: the entries up to `len`.
    chunks: Vec<Option<Box<[T]>>>,
    default: T,
    len: usize,
}

impl<T: Copy> SparseVec<T> {
    pub fn new(len: usize, default: T) -> Self {
        SparseVec {
            chunks: vec![None; len.div_ceil(CHUNK)],
            default,
            len,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn get(&self, i: usize) -> T {
        debug_assert!(i < self.len);
        match &self.chunks[i >> CHUNK_BITS] {
            Some(chunk) => chunk[i & (CHUNK - 1)],
            None => self.default,
        }
    }

    #[inline]
    pub fn set(&mut self, i: usize, value: T) {
        *self.get_mut(i) = value;
    }

    #[inline]
    pub fn get_mut(&mut self, i: usize) -> &mut T {
        debug_assert!(i < self.len);
        let (c, default, len) = (i >> CHUNK_BITS, self.default, self.len);
        // The chunk's length is worked out only when it is allocated, out of the hot path.
        let chunk = self.chunks[c].get_or_insert_with(|| new_chunk(default, chunk_len(len, c)));
        &mut chunk[i & (CHUNK - 1)]
    }

    /// [`SparseVec::prefetch`] for entries `start..start + len` (a block's worth, say), a cache line at a time.
    #[inline]
    pub fn prefetch_range(&self, start: usize, len: usize) {
        let per_line = (64 / std::mem::size_of::<T>()).max(1);
        for i in (start..start + len).step_by(per_line) {
            self.prefetch(i);
        }
        if len > 0 {
            self.prefetch(start + len - 1);
        }
    }

    /// Copies entries `start..start + out.len()` into `out`, a chunk at a time (a block's worth of entries in
    /// one call, instead of one chunk lookup per entry).
    pub fn read_range(&self, start: usize, out: &mut [T]) {
        debug_assert!(start + out.len() <= self.len);
        for (chunk, at, part) in chunk_spans(start, out.len()) {
            let n = part.len();
            match &self.chunks[chunk] {
                Some(chunk) => out[part].copy_from_slice(&chunk[at..at + n]),
                None => out[part].fill(self.default),
            }
        }
    }

    /// Sets entries `start..start + len` to `value`, a chunk at a time.
    pub fn fill_range(&mut self, start: usize, len: usize, value: T) {
        debug_assert!(start + len <= self.len);
        let default = self.default;
        for (chunk, at, part) in chunk_spans(start, len) {
            let entries = chunk_len(self.len, chunk);
            let chunk = self.chunks[chunk].get_or_insert_with(|| new_chunk(default, entries));
            chunk[at..at + part.len()].fill(value);
        }
    }

    /// Sets entries `start..start + values.len()` to `values`, a chunk at a time.
    pub fn write_range(&mut self, start: usize, values: &[T]) {
        debug_assert!(start + values.len() <= self.len);
        let default = self.default;
        for (chunk, at, part) in chunk_spans(start, values.len()) {
            let entries = chunk_len(self.len, chunk);
            let chunk = self.chunks[chunk].get_or_insert_with(|| new_chunk(default, entries));
            chunk[at..at + part.len()].copy_from_slice(&values[part]);
        }
    }

    /// How many entries from `i` on are in a chunk never written (so hold the default): those up to its
    /// chunk's end when that chunk is untouched, else 0.
    #[inline]
    pub fn untouched_from(&self, i: usize) -> usize {
        match self.chunks[i >> CHUNK_BITS] {
            None => ((i | (CHUNK - 1)) + 1).min(self.len) - i,
            Some(_) => 0,
        }
    }

    /// Asks the CPU to bring entry `i` into cache ahead of a `get` or `set` (a hint; nothing happens for an
    /// untouched chunk or off x86-64). Loops that know the next entries they will touch, such as a GC copy
    /// loop updating the map of each page it moves, overlap the cache misses this way.
    #[inline]
    pub fn prefetch(&self, i: usize) {
        // Past a short last chunk's end too: a hint never faults.
        if let Some(Some(chunk)) = self.chunks.get(i >> CHUNK_BITS) {
            prefetch(chunk.as_ptr().wrapping_add(i & (CHUNK - 1)));
        }
    }

    /// Bytes of heap this vector holds now (chunk table plus allocated chunks).
    pub fn heap_bytes(&self) -> usize {
        let entries: usize = self.chunks.iter().flatten().map(|c| c.len()).sum();
        self.chunks.len() * std::mem::size_of::<Option<Box<[T]>>>()
            + entries * std::mem::size_of::<T>()
    }
}

/// Entries of chunk `chunk` of a vector of `len`: `CHUNK`, or fewer for the last.
fn chunk_len(len: usize, chunk: usize) -> usize {
    (len - chunk * CHUNK).min(CHUNK)
}

/// The pieces of entries `start..start + len` by chunk: (chunk, first index in it, the piece's place in
/// `0..len`).
fn chunk_spans(start: usize, len: usize) -> impl Iterator<Item = (usize, usize, Range<usize>)> {
    let mut done = 0;
    std::iter::from_fn(move || {
        (done < len).then(|| {
            let i = start + done;
            let at = i & (CHUNK - 1);
            let n = (CHUNK - at).min(len - done);
            done += n;
            (i >> CHUNK_BITS, at, done - n..done)
        })
    })
}

/// A chunk of `len` entries filled with `default` (out of line: the callers' hot paths stay small).
#[cold]
#[inline(never)]
fn new_chunk<T: Copy>(default: T, len: usize) -> Box<[T]> {
    vec![default; len].into_boxed_slice()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untouched_entries_read_default_and_cost_no_chunk() {
        let mut v = SparseVec::new(1 << 30, 7u64);
        assert_eq!(v.get(123_456_789), 7);
        v.set(5, 9);
        assert_eq!(v.get(5), 9);
        assert_eq!(v.get(6), 7);
        // A prefetch is only a hint: untouched chunks and indices past the end are ignored.
        for i in [5, 123_456_789, usize::MAX] {
            v.prefetch(i);
        }
        assert_eq!(v.get(5), 9);
        // A range across two chunks, one of them untouched.
        v.set(CHUNK - 1, 3);
        let mut out = [0; 4];
        v.read_range(CHUNK - 2, &mut out);
        assert_eq!(out, [7, 3, 7, 7]);
        v.write_range(CHUNK - 1, &[4, 4]);
        v.read_range(CHUNK - 2, &mut out);
        assert_eq!(out, [7, 4, 4, 7]);
        v.fill_range(CHUNK - 2, 3, 5);
        v.read_range(CHUNK - 2, &mut out);
        assert_eq!(out, [5, 5, 5, 7]);
        // The two chunks touched and the table (a pointer and a length a chunk).
        assert_eq!(v.heap_bytes(), 2 * CHUNK * 8 + (1 << 30) / CHUNK * 16);
    }

    #[test]
    fn an_untouched_chunk_is_a_run_of_defaults_to_its_end() {
        let mut v = SparseVec::new(2 * CHUNK + 100, 0u32);
        v.set(CHUNK + 7, 1);
        assert_eq!(v.untouched_from(0), CHUNK);
        assert_eq!(v.untouched_from(CHUNK - 1), 1);
        // A chunk with one entry written is not a run, even where its entries hold the default.
        assert_eq!(v.untouched_from(CHUNK), 0);
        assert_eq!(v.untouched_from(2 * CHUNK - 1), 0);
        // The last chunk's run ends at the length.
        assert_eq!(v.untouched_from(2 * CHUNK), 100);
        assert_eq!(v.untouched_from(2 * CHUNK + 99), 1);
    }

    #[test]
    fn the_last_chunk_holds_only_the_entries_up_to_the_length() {
        let mut v = SparseVec::new(CHUNK + 100, 0u32);
        v.set(CHUNK + 99, 1);
        assert_eq!(v.heap_bytes(), 2 * 16 + 100 * 4);
        v.write_range(0, &vec![2; CHUNK + 100]);
        assert_eq!((v.get(0), v.get(CHUNK + 99)), (2, 2));
        assert_eq!(v.heap_bytes(), 2 * 16 + (CHUNK + 100) * 4);
    }
}
