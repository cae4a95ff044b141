//! Address newtypes. A logical page (`Lpn`) is what the host addresses in units of the device page size; a
//! physical page (`Ppn`) is `block * pages_per_block + offset` on the chip.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! address {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub struct $name(pub u32);

        impl $name {
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
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

/// A host data version. Every host write carries a fresh token; 0 is never used.
pub type Token = u64;
