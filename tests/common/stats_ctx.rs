//! The process-statistics client functions (`hipFileStats*`) as a small owner type for tests.

use std::ffi::c_int;
use std::io::{Read, Seek, SeekFrom};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::null_mut;

use hipfile::ffi::*;

/// A `hipFileStatsContext_t`, closed on drop.
pub struct Ctx(pub *mut hipFileStatsContext_t);

impl Ctx {
    pub fn create(pid: c_int) -> Ctx {
        let mut ctx = null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(
            unsafe { hipFileStatsCreateContext(&mut ctx, pid) },
            hipFileStatsSuccess
        );
        assert!(!ctx.is_null());
        Ctx(ctx)
    }

    pub fn connect(&self) -> hipFileStatsError_t {
        // SAFETY: a live context.
        unsafe { hipFileStatsConnectToTargetProcess(self.0) }
    }

    pub fn poll(&self, block: bool) -> hipFileStatsError_t {
        // SAFETY: a live context.
        unsafe { hipFileStatsPollTargetProcess(self.0, block) }
    }

    /// The report, written through a memfd (a pipe could fill up).
    pub fn report(&self) -> String {
        let (code, text) = self.try_report();
        assert_eq!(code, hipFileStatsSuccess);
        text
    }

    pub fn try_report(&self) -> (hipFileStatsError_t, String) {
        // SAFETY: valid name, plain flags.
        let fd = unsafe { libc::memfd_create(c"report".as_ptr(), libc::MFD_CLOEXEC) };
        assert!(fd >= 0);
        // SAFETY: a fresh descriptor we own.
        let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        // SAFETY: a live context.
        let code = unsafe { hipFileStatsGenerateReport(self.0, file.as_raw_fd()) };
        file.seek(SeekFrom::Start(0)).unwrap();
        let mut text = String::new();
        file.read_to_string(&mut text).unwrap();
        (code, text)
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: created by hipFileStatsCreateContext, closed once.
        unsafe { hipFileStatsCloseContext(self.0) };
    }
}
