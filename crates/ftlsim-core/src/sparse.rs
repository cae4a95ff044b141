//! A vector indexed by dense integers whose memory grows with the entries actually touched: chunks are
//! allocated on first write. Real traces address 100+ GiB volumes and touch a few GiB, so per-logical-page
//! tables (the integrity shadow map, page maps) use this instead of a flat `Vec`.

use std::ops::Range;

const CHUNK_BITS: u32 = 12;
const CHUNK: usize = 1 << CHUNK_BITS;

#[derive(Clone, Debug)]
pub struct SparseVec<T: Copy> {
    chunks: Vec<Option<Box<[T; CHUNK]>>>,
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
        let default = self.default;
        let chunk = self.chunks[i >> CHUNK_BITS].get_or_insert_with(|| new_chunk(default));
        &mut chunk[i & (CHUNK - 1)]
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
            let chunk = self.chunks[chunk].get_or_insert_with(|| new_chunk(default));
            chunk[at..at + part.len()].fill(value);
        }
    }

    /// Asks the CPU to bring entry `i` into cache ahead of a `get` or `set` (a hint; nothing happens for an
    /// untouched chunk or off x86-64). Loops that know the next entries they will touch, such as a GC copy
    /// loop updating the map of each page it moves, overlap the cache misses this way.
    #[inline]
    pub fn prefetch(&self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        if let Some(Some(chunk)) = self.chunks.get(i >> CHUNK_BITS) {
            // SAFETY: a prefetch never faults, and the pointer is inside the chunk.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>(chunk.as_ptr().add(i & (CHUNK - 1)).cast());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }

    /// Bytes of heap this vector holds now (chunk table plus allocated chunks).
    pub fn heap_bytes(&self) -> usize {
        let allocated = self.chunks.iter().filter(|c| c.is_some()).count();
        self.chunks.len() * std::mem::size_of::<usize>()
            + allocated * CHUNK * std::mem::size_of::<T>()
    }
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

/// A chunk filled with `default`, built on the heap: `Box::new([default; CHUNK])` would build it on the stack
/// first, and the 64 KiB stack frame (probed page by page) would cost every caller of `get_mut`, taken or not.
#[cold]
#[inline(never)]
fn new_chunk<T: Copy>(default: T) -> Box<[T; CHUNK]> {
    vec![default; CHUNK]
        .into_boxed_slice()
        .try_into()
        .unwrap_or_else(|_| unreachable!("the vector has CHUNK entries"))
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
        v.fill_range(CHUNK - 1, 2, 4);
        v.read_range(CHUNK - 2, &mut out);
        assert_eq!(out, [7, 4, 4, 7]);
        assert!(
            v.heap_bytes() < 4 << 20,
            "one chunk plus the table, got {}",
            v.heap_bytes()
        );
    }
}
