//! A cache hint for the host CPU: the engine's loops ask for memory they will touch soon (a map entry, a chip
//! record, a block's counts) so that the misses of uniform random requests overlap. A hint changes nothing.

/// Asks the CPU to bring the cache line at `at` in (x86-64 `prefetcht0`); nothing elsewhere. Never faults,
/// whatever the address.
#[inline]
pub(crate) fn prefetch<T>(at: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(at.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}
