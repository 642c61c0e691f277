//! hipfile: a Rust implementation of AMD's hipFile C API (`libhipfile.so.0`).
//!
//! The crate builds a `cdylib` exporting exactly the hipFile 0.5 C ABI (see `include/hipfile.h`)
//! and an `rlib` with a safe Rust API used by the `hipfile` command-line tool and by tests.
//!
//! Layers, top to bottom (`ARCHITECTURE.md`; `tests/layering.rs` checks that every module
//! names only the layers below it):
//! - [`ffi`] and [`api`]: the C ABI (the only home of `extern "C"`, panic boundary, C argument
//!   conversion, error codes) and the safe Rust API.
//! - [`driver`]: the process singleton (use count, session, registries).
//! - [`backend`]: the `Backend` trait, scoring, the fastpath / fallback / host backends.
//! - [`request`]: registered files, memory, and the one `Request` of an I/O.
//! - [`engine`]: bounce buffers, worker pool and chunk pipeline that move the bytes.
//! - [`stats`]: the statistics block, its server and client, reports.
//! - [`config`]: environment, parameters, the configuration snapshot.
//! - [`error`]: the one error type.
//! - [`runtime`]: the GPU runtime seam (HIP, CUDA driver API, host-only), loaded at run time.
//! - [`sys`]: raw operating-system calls.
//! - [`log`], [`vocab`]: logging; the vocabulary every layer shares.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

pub mod api;
pub(crate) mod backend;
pub mod config;
pub(crate) mod driver;
pub(crate) mod engine;
pub mod error;
pub mod ffi;
pub(crate) mod log;
pub(crate) mod request;
pub mod runtime;
pub mod stats;
pub mod sys;
pub mod vocab;

pub use error::{Error, Result};
