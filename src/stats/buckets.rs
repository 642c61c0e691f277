//! The I/O-size histogram buckets of the shared statistics block.
//!
//! Sixteen buckets: bucket 0 holds sizes below 4 KiB, bucket `i` (1..=14) holds
//! `[2^(i+11), 2^(i+12))` bytes and bucket 15 holds 64 MiB and above. The same function
//! decides the bucket of a successful I/O (its returned byte count) and of a failed one (its
//! requested size).

pub use crate::sys::stats_block::BUCKETS;

/// The bucket of a byte count: `x = bytes >> 12`; `0` if `x == 0`, else `64 - clz(x)`,
/// capped at 15.
#[inline]
pub(crate) const fn bucket(bytes: u64) -> usize {
    let x = bytes >> 12;
    let idx = if x == 0 {
        0
    } else {
        64 - x.leading_zeros() as usize
    };
    if idx < BUCKETS - 1 {
        idx
    } else {
        BUCKETS - 1
    }
}

/// Lower bound, in bytes, of bucket `i` (`i < 16`).
pub(crate) const fn lower_bound(i: usize) -> u64 {
    if i == 0 {
        0
    } else {
        1u64 << (i + 11)
    }
}

/// Upper bound (exclusive), in bytes, of bucket `i`; `None` for the last, open-ended one.
pub(crate) const fn upper_bound(i: usize) -> Option<u64> {
    if i + 1 >= BUCKETS {
        None
    } else {
        Some(1u64 << (i + 12))
    }
}

/// The report's row label of bucket `i`, in KiB: `"0-4"`, `"4-8"`, ..., `"32768-65536"`,
/// `"65536-..."`.
pub(crate) fn label(i: usize) -> String {
    let lo = lower_bound(i) >> 10;
    match upper_bound(i) {
        Some(hi) => format!("{lo}-{}", hi >> 10),
        None => format!("{lo}-..."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(1), 0);
        assert_eq!(bucket(4095), 0);
        assert_eq!(bucket(4096), 1);
        assert_eq!(bucket(8191), 1);
        assert_eq!(bucket(8192), 2);
        assert_eq!(bucket(16383), 2);
        assert_eq!(bucket(16384), 3);
        assert_eq!(bucket(1 << 20), 9);
        assert_eq!(bucket(32 << 20), 14);
        assert_eq!(bucket((64 << 20) - 1), 14);
        assert_eq!(bucket(64 << 20), 15);
        assert_eq!(bucket(1 << 40), 15);
        assert_eq!(bucket(u64::MAX), 15);
    }

    #[test]
    fn bounds_agree_with_the_function() {
        for i in 0..BUCKETS {
            assert_eq!(bucket(lower_bound(i)), i, "lower bound of {i}");
            if let Some(hi) = upper_bound(i) {
                assert_eq!(bucket(hi - 1), i, "last byte count of {i}");
                assert_eq!(bucket(hi), i + 1, "first byte count after {i}");
            }
        }
    }

    #[test]
    fn labels() {
        assert_eq!(label(0), "0-4");
        assert_eq!(label(1), "4-8");
        assert_eq!(label(2), "8-16");
        assert_eq!(label(14), "32768-65536");
        assert_eq!(label(15), "65536-...");
    }
}
