//! Sequences of every call family of libcufile.so.0's C ABI (driver, properties, parameters,
//! slab arrays, statistics at each cuFile version's structure size, BAR, P2P, topology,
//! handles, buffers, sync, vectored, batch and stream-ordered I/O), checked against a model.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    hipfile_fuzz::cufile::run(data);
});
