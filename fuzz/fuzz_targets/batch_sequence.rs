//! Sequences weighted towards the batch API: set-up, submission with `nr` against arrays of
//! every length, status, cancel and destroy, around registration, I/O and driver close.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    hipfile_fuzz::run(data, hipfile_fuzz::Mode::Batch);
});
