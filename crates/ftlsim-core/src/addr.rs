//! Address newtypes. A logical page (`Lpn`) is what the host addresses in units of the device page size; a
//! physical page (`Ppn`) is `block * pages_per_block + offset` on the chip. [`Opt`] is an optional address in
//! the same 4 bytes: `u32::MAX` is "none", a value no address reaches (`common/bounds.rs` keeps every page
//! address of a device below it).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::marker::PhantomData;

/// A value stored in a `u32` whose `u32::MAX` is never a real value, so [`Opt`] can use it as "none".
pub trait Niche: Copy {
    fn to_raw(self) -> u32;
    fn from_raw(raw: u32) -> Self;
}

/// Slot and list indices of the schemes' tables are bare `u32`s below their table's length.
impl Niche for u32 {
    #[inline]
    fn to_raw(self) -> u32 {
        self
    }
    #[inline]
    fn from_raw(raw: u32) -> Self {
        raw
    }
}

macro_rules! address {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[repr(transparent)]
        pub struct $name(pub u32);

        impl $name {
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl Niche for $name {
            #[inline]
            fn to_raw(self) -> u32 {
                self.0
            }
            #[inline]
            fn from_raw(raw: u32) -> Self {
                $name(raw)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

address!(
    /// Logical page number, in units of the device page size.
    Lpn
);
address!(
    /// Logical block number: `lpn / pages_per_block`.
    Lbn
);
address!(
    /// Physical page number: `pbn * pages_per_block + offset`.
    Ppn
);
address!(
    /// Physical block number.
    Pbn
);

impl Lpn {
    /// The logical block holding this page.
    #[inline]
    pub fn lbn(self, ppb: u32) -> Lbn {
        Lbn(self.0 / ppb)
    }

    /// The page's offset within its logical block.
    #[inline]
    pub fn offset(self, ppb: u32) -> u32 {
        self.0 % ppb
    }

    /// Pages from this one to the end of its logical block, this one included.
    #[inline]
    pub fn left_in_block(self, ppb: u32) -> u32 {
        ppb - self.offset(ppb)
    }
}

impl Lbn {
    /// The block's logical page at `offset`.
    #[inline]
    pub fn lpn(self, offset: u32, ppb: u32) -> Lpn {
        Lpn(self.0 * ppb + offset)
    }

    /// The block's first logical page.
    #[inline]
    pub fn first_lpn(self, ppb: u32) -> Lpn {
        Lpn(self.0 * ppb)
    }
}

impl Ppn {
    /// The page at `offset` of block `pbn`.
    #[inline]
    pub fn new(pbn: Pbn, offset: u32, ppb: u32) -> Ppn {
        debug_assert!(
            offset < ppb,
            "offset {offset} outside a block of {ppb} pages"
        );
        Ppn(pbn.0 * ppb + offset)
    }

    /// The block holding this page.
    #[inline]
    pub fn block(self, ppb: u32) -> Pbn {
        Pbn(self.0 / ppb)
    }

    /// The page's offset within its block.
    #[inline]
    pub fn offset(self, ppb: u32) -> u32 {
        self.0 % ppb
    }
}

/// An optional address (or index) in 4 bytes: `Option<T>` with `u32::MAX` as `None`, for tables with one
/// entry per page or block where an `Option<u32>` would double the memory.
#[repr(transparent)]
pub struct Opt<T: Niche>(u32, PhantomData<T>);

const NONE_RAW: u32 = u32::MAX;

impl<T: Niche> Opt<T> {
    pub const NONE: Opt<T> = Opt(NONE_RAW, PhantomData);

    #[inline]
    pub const fn none() -> Opt<T> {
        Opt::NONE
    }

    #[inline]
    pub fn some(x: T) -> Opt<T> {
        let raw = x.to_raw();
        debug_assert!(
            raw != NONE_RAW,
            "an address equal to the none niche (u32::MAX)"
        );
        Opt(raw, PhantomData)
    }

    #[inline]
    pub fn get(self) -> Option<T> {
        (self.0 != NONE_RAW).then(|| T::from_raw(self.0))
    }

    #[inline]
    pub fn is_some(self) -> bool {
        self.0 != NONE_RAW
    }

    #[inline]
    pub fn is_none(self) -> bool {
        self.0 == NONE_RAW
    }

    /// The value, after storing `f()` if there was none.
    #[inline]
    pub fn get_or_insert_with(&mut self, f: impl FnOnce() -> T) -> T {
        if self.is_none() {
            *self = Opt::some(f());
        }
        T::from_raw(self.0)
    }

    /// The value, leaving none in its place.
    #[inline]
    pub fn take(&mut self) -> Option<T> {
        std::mem::replace(self, Opt::NONE).get()
    }
}

/// The index of the first entry of `entries` that is some (`entries.len()` if none is): the scans of a block's
/// map entries, mostly none, that merges make ([`first_with`]).
#[inline]
pub fn first_some<T: Niche>(entries: &[Opt<T>]) -> usize {
    first_with(entries, true)
}

/// The index of the first entry of `entries` that is none (`entries.len()` if every one is some): where a run
/// of copies from a merge's sources ends.
#[inline]
pub fn first_none<T: Niche>(entries: &[Opt<T>]) -> usize {
    first_with(entries, false)
}

/// The index of the first entry of `entries` whose `is_some()` is `some`: eight entries at a time without a
/// branch each, which the compiler turns into vector compares.
#[inline(always)]
fn first_with<T: Niche>(entries: &[Opt<T>], some: bool) -> usize {
    let mut chunks = entries.chunks_exact(8);
    let mut skipped = 0;
    for chunk in &mut chunks {
        if chunk
            .iter()
            .fold(false, |any, e| any | (e.is_some() == some))
        {
            break;
        }
        skipped += 8;
    }
    let rest = &entries[skipped..];
    skipped
        + rest
            .iter()
            .position(|e| e.is_some() == some)
            .unwrap_or(rest.len())
}

/// The entries of `entries` that are some, with their indexes, in order: found eight at a time
/// ([`first_some`]), for the scans of a block's map entries, mostly none.
#[inline]
pub fn somes<T: Niche>(entries: &[Opt<T>]) -> impl Iterator<Item = (usize, T)> + '_ {
    let mut at = first_some(entries);
    std::iter::from_fn(move || {
        let value = entries.get(at)?.get()?;
        let found = at;
        at += 1 + first_some(&entries[at + 1..]);
        Some((found, value))
    })
}

/// A source of a run of copies ([`crate::device::Device::copy_run`]): a page, or a merge's map entry that
/// holds one (a none would read as `u32::MAX`, beyond every chip, and be refused).
pub trait SourcePage: Copy {
    fn page(self) -> u32;
}

impl SourcePage for Ppn {
    #[inline(always)]
    fn page(self) -> u32 {
        self.0
    }
}

impl SourcePage for Opt<Ppn> {
    #[inline(always)]
    fn page(self) -> u32 {
        self.0
    }
}

impl<T: Niche> From<Option<T>> for Opt<T> {
    #[inline]
    fn from(o: Option<T>) -> Opt<T> {
        o.map_or(Opt::NONE, Opt::some)
    }
}

impl<T: Niche> Clone for Opt<T> {
    #[inline]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Niche> Copy for Opt<T> {}
impl<T: Niche> PartialEq for Opt<T> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl<T: Niche> Eq for Opt<T> {}
impl<T: Niche> Default for Opt<T> {
    fn default() -> Self {
        Opt::NONE
    }
}
impl<T: Niche + fmt::Debug> fmt::Debug for Opt<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

/// A host data version. Every host write carries a fresh token; 0 is never used.
pub type Token = u64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opt_is_four_bytes_and_round_trips() {
        assert_eq!(std::mem::size_of::<Opt<Ppn>>(), 4);
        assert_eq!(std::mem::size_of::<Opt<u32>>(), 4);
        assert_eq!(std::mem::size_of::<Ppn>(), 4);
        let none: Opt<Ppn> = Opt::none();
        assert_eq!(none.get(), None);
        assert!(none.is_none() && !none.is_some());
        // The highest real address survives; zero is a real address, not none.
        assert_eq!(Opt::some(Ppn(u32::MAX - 1)).get(), Some(Ppn(u32::MAX - 1)));
        assert_eq!(Opt::some(Ppn(0)).get(), Some(Ppn(0)));
        let mut o = Opt::from(Some(Lpn(7)));
        assert_eq!(o.take(), Some(Lpn(7)));
        assert_eq!(o, Opt::NONE);
        assert_eq!(Opt::<Lpn>::from(None), Opt::NONE);
        // Inserted only when none: the second call keeps 3 and does not run its closure.
        let mut slot: Opt<u32> = Opt::NONE;
        assert_eq!(slot.get_or_insert_with(|| 3), 3);
        assert_eq!(slot.get_or_insert_with(|| unreachable!()), 3);
        assert_eq!(slot.get(), Some(3));
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "none niche")]
    fn a_real_address_equal_to_the_niche_is_a_bug() {
        let _ = Opt::some(Pbn(u32::MAX));
    }

    #[test]
    fn first_some_first_none_and_somes_find_entries_in_and_past_every_chunk() {
        for len in [0, 1, 7, 8, 9, 16, 64, 67] {
            let none = vec![Opt::<u32>::NONE; len];
            let some = vec![Opt::<u32>::some(1); len];
            assert_eq!(first_some(&none), len, "all none, {len} entries");
            assert_eq!(first_none(&some), len, "all some, {len} entries");
            assert_eq!(somes(&none).count(), 0);
            for at in 0..len {
                let (mut one_some, mut one_none) = (none.clone(), some.clone());
                one_some[at] = Opt::some(0);
                one_none[at] = Opt::NONE;
                // A later one does not hide the first.
                if at + 3 < len {
                    one_some[at + 3] = Opt::some(5);
                    one_none[at + 3] = Opt::NONE;
                }
                assert_eq!(
                    first_some(&one_some),
                    at,
                    "{len} entries, first some at {at}"
                );
                assert_eq!(
                    first_none(&one_none),
                    at,
                    "{len} entries, first none at {at}"
                );
                let found: Vec<(usize, u32)> = somes(&one_some).collect();
                let want = if at + 3 < len {
                    vec![(at, 0), (at + 3, 5)]
                } else {
                    vec![(at, 0)]
                };
                assert_eq!(found, want, "{len} entries, some at {at}");
            }
        }
    }

    #[test]
    fn page_and_block_arithmetic() {
        // 64 pages a block: page 130 is offset 2 of block 2.
        assert_eq!(Ppn::new(Pbn(2), 2, 64), Ppn(130));
        assert_eq!(Ppn(130).block(64), Pbn(2));
        assert_eq!(Ppn(130).offset(64), 2);
        assert_eq!(Ppn::new(Pbn(3), 63, 64), Ppn(255));
        assert_eq!(Lpn(200).lbn(64), Lbn(3));
        assert_eq!(Lpn(200).offset(64), 8);
        assert_eq!(Lbn(3).first_lpn(64), Lpn(192));
        assert_eq!(Lbn(3).lpn(8, 64), Lpn(200));
    }
}
