//! Sequences of every C-API call family (driver, handles, buffers, I/O, parameters,
//! properties, streams, batch, statistics, simulator faults), checked against a model.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    hipfile_fuzz::run(data, hipfile_fuzz::Mode::Api);
});
