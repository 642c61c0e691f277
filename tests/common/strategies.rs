//! Shared proptest pieces of the randomised tests.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Offsets and sizes biased towards 4 KiB edges: anything up to `max`, exact multiples of
/// 4 KiB, and multiples of 4 KiB give or take two bytes.
pub fn edgy(max: u64) -> impl Strategy<Value = u64> {
    prop_oneof![
        0..=max,
        (0..=max / 4096).prop_map(|p| p * 4096),
        (1..=max / 4096)
            .prop_flat_map(|p| (-2i64..=2).prop_map(move |d| (p * 4096).saturating_add_signed(d))),
    ]
}

/// A runner of `cases` random cases that writes no regression files (a failing case is
/// printed in full, shrunk, in the test's output instead).
pub fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}
