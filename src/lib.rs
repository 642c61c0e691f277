//! hipfile: a Rust implementation of AMD's hipFile C API (`libhipfile.so.0`).
//!
//! The crate builds a `cdylib` exporting exactly the hipFile 0.5 C ABI (see `include/hipfile.h`)
//! and an `rlib` with a safe Rust API used by the `hipfile` command-line tool and by tests.
//!
//! Layers, top to bottom (see `shared/design/architecture.md`):
//! - [`ffi`]: the only home of `extern "C"`; panic boundary; C argument checks; error codes.
//! - [`driver`]: the process singleton (reference count, configuration, registries).
//! - [`backend`]: scoring and the fastpath / fallback / host backends.
//! - [`engine`]: bounce buffers, worker pool and chunk pipeline that move the bytes.
//! - [`runtime`]: the GPU runtime seam (HIP, CUDA driver API, host-only), loaded at run time.
//! - [`sys`]: raw operating-system calls.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

pub mod api;
pub mod backend;
pub mod config;
pub mod driver;
pub mod engine;
pub mod error;
pub mod ffi;
pub mod log;
pub mod request;
pub mod runtime;
pub mod stats;
pub mod sys;
pub mod vocab;

pub use error::{Error, Result};
