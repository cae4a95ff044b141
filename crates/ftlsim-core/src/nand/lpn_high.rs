//! The high bits of the page records' logical pages, beside the slab: a record holds a logical page's low 24
//! bits, and a chip whose logical pages need more keeps the rest here, in as few bits a record as the widest
//! logical page programmed so far needs (2, 4 or 8: a 512 GiB drive of 8 KiB pages, 2^26 pages, pays a
//! quarter of a byte a page). None are kept until the first logical page that does not fit 24 bits.

/// A logical page's none as the record's 24 low bits hold it; with all ones in the high bits, it is none.
pub(super) const LOW_NONE: u32 = (1 << 24) - 1;

/// The records' high bits, in slab order, `8 / bits` records to a byte (the first in the low bits).
pub(super) struct LpnHigh {
    /// Bits a record: 0 (none kept: every logical page programmed fits 24 bits), 2, 4 or 8.
    bits: u32,
    bytes: Vec<u8>,
    /// The smallest logical page the records cannot hold: 2^(24 + bits) - 1 (all ones is none).
    limit: u32,
}

impl LpnHigh {
    pub(super) fn new() -> LpnHigh {
        LpnHigh {
            bits: 0,
            bytes: Vec::new(),
            limit: LOW_NONE,
        }
    }

    /// Whether any high bits are kept.
    #[inline(always)]
    pub(super) fn is_kept(&self) -> bool {
        self.bits != 0
    }

    /// Whether a record can hold logical page `raw` (`u32::MAX`: none, which it always can).
    #[inline(always)]
    pub(super) fn holds(&self, raw: u32) -> bool {
        raw < self.limit || raw == u32::MAX
    }

    /// All ones in a record's high bits: with the low 24 bits all ones, none.
    #[inline(always)]
    fn none(&self) -> u32 {
        (1 << self.bits) - 1
    }

    /// The logical page (`u32::MAX` for none) of record `at`, whose low 24 bits are `low`.
    #[inline(always)]
    pub(super) fn raw(&self, at: usize, low: u32) -> u32 {
        if !self.is_kept() {
            return if low == LOW_NONE { u32::MAX } else { low };
        }
        let high = self.get(at);
        if low == LOW_NONE && high == self.none() {
            u32::MAX
        } else {
            low | high << 24
        }
    }

    /// Keeps the high bits of logical page `raw` (one it [`LpnHigh::holds`]) for record `at`.
    #[inline(always)]
    pub(super) fn set_raw(&mut self, at: usize, raw: u32) {
        if self.is_kept() {
            let high = if raw == u32::MAX {
                self.none()
            } else {
                raw >> 24
            };
            self.set(at, high);
        }
    }

    #[inline(always)]
    fn place(&self, at: usize) -> (usize, u32) {
        let per_byte_log = 3 - self.bits.trailing_zeros();
        (
            at >> per_byte_log,
            (at as u32 & ((1 << per_byte_log) - 1)) * self.bits,
        )
    }

    #[inline(always)]
    fn get(&self, at: usize) -> u32 {
        let (byte, shift) = self.place(at);
        (self.bytes[byte] as u32 >> shift) & self.none()
    }

    #[inline(always)]
    fn set(&mut self, at: usize, high: u32) {
        let (byte, shift) = self.place(at);
        let mask = (self.none() << shift) as u8;
        let b = &mut self.bytes[byte];
        *b = (*b & !mask) | ((high << shift) as u8 & mask);
    }

    /// Record `to` gets record `from`'s high bits.
    #[inline(always)]
    pub(super) fn copy(&mut self, from: usize, to: usize) {
        if self.is_kept() {
            let high = self.get(from);
            self.set(to, high);
        }
    }

    /// The records `run` read none.
    pub(super) fn set_none(&mut self, run: std::ops::Range<usize>) {
        if self.is_kept() {
            let none = self.none();
            run.for_each(|at| self.set(at, none));
        }
    }

    /// Bytes that hold `records` records.
    fn bytes_for(&self, records: usize) -> usize {
        (records * self.bits as usize).div_ceil(8)
    }

    /// Memory for `records` records, as the slab reserves it.
    pub(super) fn reserve_for(&mut self, records: usize) {
        let bytes = self.bytes_for(records);
        self.bytes
            .reserve_exact(bytes.saturating_sub(self.bytes.len()));
    }

    /// Room for `records` records (those past the ones kept read none).
    pub(super) fn grow_to(&mut self, records: usize) {
        let bytes = self.bytes_for(records);
        if bytes > self.bytes.len() {
            self.bytes.resize(bytes, 0xFF);
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
    }

    /// Keeps enough bits a record for logical page `raw` (not none, and not held now), for the `records`
    /// records whose low 24 bits `low(at)` gives (memory reserved for `capacity`); every record keeps its
    /// logical page.
    #[cold]
    #[inline(never)]
    pub(super) fn widen(
        &mut self,
        raw: u32,
        records: usize,
        capacity: usize,
        low: impl Fn(usize) -> u32,
    ) {
        let bits = [2, 4, 8]
            .into_iter()
            .find(|&bits| raw < ((1u64 << (24 + bits)) - 1) as u32)
            .unwrap_or(8);
        let mut wider = LpnHigh {
            bits,
            bytes: Vec::new(),
            limit: ((1u64 << (24 + bits)) - 1).min(u32::MAX as u64) as u32,
        };
        wider.reserve_for(capacity);
        wider.grow_to(records);
        for at in 0..records {
            wider.set_raw(at, self.raw(at, low(at)));
        }
        *self = wider;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every width holds its boundary logical pages and none, and widening keeps what the records held.
    #[test]
    fn records_keep_their_logical_pages_through_every_width() {
        let low = |raw: u32| raw & LOW_NONE;
        let mut high = LpnHigh::new();
        assert!(high.holds(LOW_NONE - 1) && high.holds(u32::MAX) && !high.holds(LOW_NONE));
        let mut lows = [0; 5];
        let mut want = [u32::MAX; 5];
        for (at, &raw) in [0, 5, LOW_NONE - 1].iter().enumerate() {
            (lows[at], want[at]) = (low(raw), raw);
        }
        (lows[3], want[3]) = (LOW_NONE, u32::MAX);
        // 2^24 - 1 does not fit 24 bits (it is their none): 2 bits a record.
        high.widen(LOW_NONE, 5, 5, |at| lows[at]);
        assert_eq!(
            (high.bits, high.limit, high.heap_bytes()),
            (2, (1 << 26) - 1, 2)
        );
        for (at, &raw) in [LOW_NONE, (1 << 26) - 2].iter().enumerate() {
            let at = at + 3;
            high.set_raw(at, raw);
            (lows[at], want[at]) = (low(raw), raw);
        }
        for (at, &raw) in want.iter().enumerate() {
            assert_eq!(high.raw(at, lows[at]), raw, "2 bits, record {at}");
        }
        // 2^26 - 1 does not fit 26 bits: 4 bits a record, 8 from 2^28 - 1 on.
        assert!(!high.holds((1 << 26) - 1));
        for (raw, bits) in [((1u32 << 26) - 1, 4), ((1 << 28) - 1, 8)] {
            high.widen(raw, 5, 5, |at| lows[at]);
            assert_eq!(high.bits, bits);
            for (at, &raw) in want.iter().enumerate() {
                assert_eq!(high.raw(at, lows[at]), raw, "{bits} bits, record {at}");
            }
        }
        high.set_raw(1, u32::MAX - 1);
        high.copy(1, 0);
        high.set_none(1..2);
        assert_eq!(high.raw(0, low(u32::MAX - 1)), u32::MAX - 1);
        assert_eq!(high.raw(1, LOW_NONE), u32::MAX);
        high.grow_to(9);
        assert_eq!(high.raw(8, LOW_NONE), u32::MAX, "grown records read none");
    }
}
