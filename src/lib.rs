//! hipfile: a Rust implementation of AMD's hipFile C API (`libhipfile.so.0`).
//!
//! The crate builds a `cdylib` exporting exactly the hipFile 0.5 C ABI (see `include/hipfile.h`)
//! and an `rlib` whose public surface is the safe Rust API ([`api`], used by the `hipfile`
//! command-line tool), the error type ([`Error`], [`Result`]) and the C ABI itself ([`ffi`]:
//! the exported functions and the header's types, which in-process Rust tests call). Everything
//! else is private to the crate.
//!
//! Layers, top to bottom (`ARCHITECTURE.md`; `tests/layering.rs` checks that every module
//! names only the layers below it):
//! - [`ffi`] and [`api`]: the C ABI (the only home of `extern "C"`, panic boundary, C argument
//!   conversion, error codes) and the safe Rust API.
//! - `driver`: the process singleton (use count, session, registries).
//! - `backend`: the `Backend` trait, scoring, the fastpath / fallback / host backends.
//! - `request`: registered files, memory, and the one `Request` of an I/O.
//! - `engine`: bounce buffers, worker pool and chunk pipeline that move the bytes.
//! - `stats`: the statistics block, its server and client, reports.
//! - `config`: environment, parameters, the configuration snapshot.
//! - `error`: the one error type.
//! - `runtime`: the GPU runtime seam (HIP, CUDA driver API, host-only), loaded at run time.
//! - `log`: logging set-up (it opens the log file and asks `sys` whether the environment
//!   may name one).
//! - `sys`: raw operating-system calls.
//! - `vocab`: the vocabulary every layer shares.
#![warn(missing_docs)]
// Items written `pub` are reachable from outside the crate (its safe API, its C ABI, or the
// test-only internals): everything else is `pub(crate)` or narrower, so rustc reports dead
// code. Judged with the internals visible, as every test build has them.
#![cfg_attr(feature = "test-internals", warn(unreachable_pub))]
// Every `unsafe` operation sits in its own block, even in an `unsafe fn`, with the `// SAFETY:`
// line that says why it holds; every public `unsafe fn` documents its contract (`# Safety`).
#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

pub mod api;
pub(crate) mod backend;
pub(crate) mod config;
pub(crate) mod driver;
pub(crate) mod engine;
pub(crate) mod error;
pub mod ffi;
pub(crate) mod log;
pub(crate) mod request;
pub(crate) mod runtime;
pub(crate) mod stats;
pub(crate) mod sys;
pub(crate) mod vocab;

pub use error::{Error, Result};

/// Test-only: cargo feature `test-internals`, which only the crate's own dev-dependency on
/// itself enables (so `cargo test` has it and no build that ships does). The integration
/// suites that run each test in its own process and drive internals directly (the
/// statistics recorder and server, a fake GPU runtime, the parameter table, the I/O fault
/// seam) reach them here; everything else goes through [`api`] and [`ffi`]. See
/// ARCHITECTURE.md, "Public surface".
#[cfg(feature = "test-internals")]
#[doc(hidden)]
pub mod internals {
    /// The statistics block, its recorder and server.
    pub mod stats {
        pub use crate::stats::layout::{RETIRED_SIZE, SHARED_SIZE};
        pub use crate::stats::{init, level, recorder, server, shm, snapshot_self, Layout};
    }
    /// The GPU runtime seam, for a fake runtime: the core, and the capabilities a fake may
    /// add.
    pub mod runtime {
        pub use crate::runtime::{
            install, DeviceRestore, EventHandle, Platform, PointerInfo, RtError, RtResult, Runtime,
            StreamHandle, Streams, Tools,
        };
        pub use crate::vocab::{Address, MemoryType};
    }
    /// The parameter table.
    pub mod config {
        pub use crate::config::params::{BOOL_PARAMS, SIZE_PARAMS};
    }
    /// Injected `pread`/`pwrite` failures (cargo feature `io-fault-seam` as well).
    #[cfg(feature = "io-fault-seam")]
    pub use crate::sys::io::fault_seam;
}
