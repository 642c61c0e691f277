//! Shared pieces of the stream-ordered I/O suites (`tests/async_io.rs` and
//! `tests/async_results.rs` on hipsim's HIP side, `tests/async_cuda.rs` on its CUDA side): an
//! operation's by-reference parameters and the two submissions, on any stream type the suite
//! defines, and the HIP side's application stream.

use std::ffi::c_void;

use super::{hipFileError_t, hipFileHandle_t, hipFileReadAsync, hipFileWriteAsync, sim};

/// An application stream of a suite (a `hipStream_t` or a `CUstream`).
pub trait RawStream {
    /// The handle as the C ABI takes it.
    fn raw(&self) -> *mut c_void;
}

/// A stream handle the caller owns (creates and destroys) itself.
pub struct Raw(pub *mut c_void);

impl RawStream for Raw {
    fn raw(&self) -> *mut c_void {
        self.0
    }
}

/// An application stream of hipsim's HIP side (blocking, as `hipStreamCreate` makes them),
/// destroyed on drop; `Stream(null)` is the null stream.
pub struct Stream(pub *mut c_void);

// SAFETY: a stream handle may be used from any thread.
unsafe impl Send for Stream {}
// SAFETY: as above.
unsafe impl Sync for Stream {}

impl RawStream for Stream {
    fn raw(&self) -> *mut c_void {
        self.0
    }
}

impl Stream {
    /// `hipStreamCreate`.
    pub fn new() -> Stream {
        let mut s = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { (sim().stream_create)(&mut s) }, 0);
        Stream(s)
    }

    /// `hipStreamSynchronize`, which must succeed.
    pub fn sync(&self) {
        // SAFETY: a live stream (or NULL).
        assert_eq!(unsafe { (sim().stream_synchronize)(self.0) }, 0);
    }

    /// Whether everything queued on it has run (`hipStreamQuery`).
    pub fn idle(&self) -> bool {
        // SAFETY: as above.
        unsafe { (sim().stream_query)(self.0) == 0 }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: created by hipStreamCreate.
            unsafe { (sim().stream_destroy)(self.0) };
        }
    }
}

/// The by-reference parameters of one operation (kept at a stable address until the stream
/// has passed it).
#[derive(Debug)]
pub struct Params {
    pub size: usize,
    pub file_offset: i64,
    pub buffer_offset: i64,
    pub bytes: isize,
}

impl Params {
    /// Boxed, so the address stays put; `bytes` preset to -77 (the submission overwrites it).
    pub fn new(size: usize, file_offset: i64, buffer_offset: i64) -> Box<Params> {
        Box::new(Params {
            size,
            file_offset,
            buffer_offset,
            bytes: -77,
        })
    }

    /// `bytes`, read as the stream's worker wrote it.
    pub fn result(&self) -> isize {
        // SAFETY: a field of a live value; the library writes it from another thread.
        unsafe { std::ptr::read_volatile(&self.bytes) }
    }

    /// Change the size behind the pointer (the library reads it when the operation runs).
    pub fn set_size(&mut self, v: usize) {
        // SAFETY: as above.
        unsafe { std::ptr::write_volatile(&mut self.size, v) }
    }

    /// Change both offsets behind the pointers.
    pub fn set_offsets(&mut self, file_offset: i64, buffer_offset: i64) {
        // SAFETY: as above.
        unsafe {
            std::ptr::write_volatile(&mut self.file_offset, file_offset);
            std::ptr::write_volatile(&mut self.buffer_offset, buffer_offset);
        }
    }
}

/// `hipFileReadAsync` with `p`'s pointers on `s`.
pub fn read_async(
    fh: hipFileHandle_t,
    buf: *mut c_void,
    p: &mut Params,
    s: &impl RawStream,
) -> hipFileError_t {
    // SAFETY: the parameters live (boxed) until the test synchronised the stream.
    unsafe {
        hipFileReadAsync(
            fh,
            buf,
            &mut p.size,
            &mut p.file_offset,
            &mut p.buffer_offset,
            &mut p.bytes,
            s.raw(),
        )
    }
}

/// `hipFileWriteAsync` with `p`'s pointers on `s`.
pub fn write_async(
    fh: hipFileHandle_t,
    buf: *mut c_void,
    p: &mut Params,
    s: &impl RawStream,
) -> hipFileError_t {
    // SAFETY: as for `read_async`.
    unsafe {
        hipFileWriteAsync(
            fh,
            buf,
            &mut p.size,
            &mut p.file_offset,
            &mut p.buffer_offset,
            &mut p.bytes,
            s.raw(),
        )
    }
}
