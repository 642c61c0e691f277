//! Small helpers shared by the subcommands: error messages in `cp`'s style, page-aligned host
//! buffers, a pseudo-random generator, positional I/O loops and number formatting.

use std::alloc::{self, Layout};
use std::fmt;
use std::io;
use std::os::fd::AsFd;

/// A failure of the tool: the message printed after `hipfile: `; the exit code is 1.
#[derive(Debug)]
pub(crate) struct CliError(pub String);

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Result of the tool's operations.
pub(crate) type CliResult<T> = Result<T, CliError>;

/// Build a [`CliError`] from anything printable.
pub(crate) fn fail<T>(msg: impl Into<String>) -> CliResult<T> {
    Err(CliError(msg.into()))
}

/// The text of an errno as `strerror` gives it ("No such file or directory").
pub(crate) fn errno_text(errno: i32) -> String {
    strip_os_suffix(&io::Error::from_raw_os_error(errno).to_string())
}

/// The text of an I/O error without Rust's " (os error N)" suffix.
pub(crate) fn io_text(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(n) => errno_text(n),
        None => e.to_string(),
    }
}

fn strip_os_suffix(s: &str) -> String {
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s.to_string(),
    }
}

/// The text of a library error: an errno as `strerror` says it, anything else as the library
/// describes it.
pub(crate) fn lib_text(e: &hipfile::Error) -> String {
    match e {
        hipfile::Error::Os(n) => errno_text(*n),
        other => other.to_string(),
    }
}

/// CPU time (user + system) the whole process has used so far, every thread included: the
/// benchmark's measure of what moving the bytes costs the machine besides the wall clock.
pub(crate) fn process_cpu() -> std::time::Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    std::time::Duration::try_from(t).unwrap_or_default()
}

/// The file the dynamic loader mapped the code or data at `addr` from (`dladdr`, which rustix
/// does not have); `None` for an address outside every loaded object.
pub(crate) fn loaded_from(addr: *const std::ffi::c_void) -> Option<std::path::PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: a zeroed Dl_info is a valid out-value; dladdr only compares the address.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `info` is a valid out-pointer.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr gave a NUL-terminated path owned by the loader, copied at once.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    Some(std::ffi::OsStr::from_bytes(name.to_bytes()).into())
}

/// The simulated runtime `--sim` pointed the library at (set once, by `main`).
static SIM: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Record that `--sim` chose the simulated runtime at `lib`.
pub(crate) fn set_sim(lib: std::path::PathBuf) {
    let _ = SIM.set(lib);
}

/// The simulated runtime `--sim` chose, if it did.
pub(crate) fn sim_lib() -> Option<&'static std::path::Path> {
    SIM.get().map(|p| p.as_path())
}

/// Why the library uses its GPU runtime, as the user should read it: with `--sim` the
/// option chose it (the tool set HIPFILE_PLATFORM and HIPFILE_HIP_LIBRARY for it), else the
/// library's own reason.
pub(crate) fn chosen_because(rt: &hipfile::api::RuntimeReport) -> String {
    match SIM.get() {
        Some(lib) if rt.simulated => format!(
            "--sim chose the simulated GPU runtime {} (the tool set HIPFILE_PLATFORM=amd and HIPFILE_HIP_LIBRARY for it)",
            lib.display()
        ),
        _ => rt.reason.clone(),
    }
}

/// Page size used for alignment (4 KiB covers every O_DIRECT requirement we meet).
pub(crate) const PAGE: usize = 4096;

/// Page-aligned, pageable host memory (the "host memory" of `--mem host` and of the
/// baselines): plain heap memory that the GPU runtime does not know about.
pub(crate) struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the allocation is exclusively owned; access goes through &self / &mut self.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared access is read-only through &self.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Allocate `len` zeroed bytes aligned to [`PAGE`].
    pub(crate) fn new(len: usize) -> CliResult<AlignedBuf> {
        let layout = Self::layout(len)?;
        // SAFETY: the layout has a non-zero size (at least one page).
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return fail(format!(
                "cannot allocate {} of host memory",
                fmt_bytes(len as u64)
            ));
        }
        Ok(AlignedBuf { ptr, len })
    }

    fn layout(len: usize) -> CliResult<Layout> {
        Layout::from_size_align(len.max(1).next_multiple_of(PAGE), PAGE)
            .map_err(|_| CliError(format!("{len} bytes is too large a buffer")))
    }

    /// The memory, read-only.
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: `len` initialised (zeroed) bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The memory.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `len` initialised bytes owned by self, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = Self::layout(self.len).expect("validated at allocation");
        // SAFETY: allocated in `new` with this layout; no borrow outlives self.
        unsafe { alloc::dealloc(self.ptr, layout) };
    }
}

/// xorshift64*: fast, deterministic pseudo-random numbers (file contents, random offsets).
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator from a seed (any value; zero is remapped).
    pub(crate) fn new(seed: u64) -> Rng {
        Rng((seed ^ 0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A value in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Fill `buf` with random bytes, none of them zero.
    pub(crate) fn fill_nonzero(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            for (d, s) in chunk.iter_mut().zip(v) {
                *d = if s == 0 { 0xa5 } else { s };
            }
        }
    }
}

/// `pread` until `buf` is full or end of file; returns the count (`EINTR` retried).
pub(crate) fn pread_full(fd: impl AsFd, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::pread(&fd, &mut buf[done..], offset_at(offset, done)?) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(done)
}

/// `pwrite` all of `buf` at `offset` (`EINTR` retried); a write that makes no progress is
/// `EIO`.
pub(crate) fn pwrite_all(fd: impl AsFd, buf: &[u8], offset: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::pwrite(&fd, &buf[done..], offset_at(offset, done)?) {
            Ok(0) => return Err(io::Error::from_raw_os_error(libc::EIO)),
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// `offset + done`, at most the largest `off_t`; beyond it is `EINVAL`, as the kernel says.
fn offset_at(offset: u64, done: usize) -> io::Result<u64> {
    offset
        .checked_add(done as u64)
        .filter(|&o| i64::try_from(o).is_ok())
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))
}

/// Bytes in a human unit ("64 MiB", "1.5 GiB", "4096 B").
pub(crate) fn fmt_bytes(n: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (name, unit) in UNITS {
        if n >= unit {
            return if n % unit == 0 {
                format!("{} {name}", n / unit)
            } else {
                format!("{:.1} {name}", n as f64 / unit as f64)
            };
        }
    }
    format!("{n} B")
}

/// Whether standard output is a terminal.
pub(crate) fn stdout_is_terminal() -> bool {
    use std::io::IsTerminal;
    io::stdout().is_terminal()
}

/// Whether standard error is a terminal (progress bars are drawn there, only then).
pub(crate) fn stderr_is_terminal() -> bool {
    use std::io::IsTerminal;
    io::stderr().is_terminal()
}

/// A progress bar on standard error that appears only once the work has run for a second
/// (when `enabled`: a terminal, no `--json`/`-q`), and is cleared when dropped, also on errors.
pub(crate) struct DelayedBar {
    bar: indicatif::ProgressBar,
    enabled: bool,
    shown: bool,
    start: std::time::Instant,
}

/// How long work runs before [`DelayedBar`] shows itself.
pub(crate) const BAR_DELAY: std::time::Duration = std::time::Duration::from_secs(1);

impl DelayedBar {
    /// A bar for `total` bytes, drawn with the indicatif `template`.
    pub(crate) fn new(total: u64, template: &str, enabled: bool) -> DelayedBar {
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(total),
            indicatif::ProgressDrawTarget::hidden(),
        );
        bar.set_style(indicatif::ProgressStyle::with_template(template).expect("valid template"));
        DelayedBar {
            bar,
            enabled,
            shown: false,
            start: std::time::Instant::now(),
        }
    }

    /// The label in front of the bar (`{msg}` in the template).
    pub(crate) fn set_message(&self, msg: String) {
        self.bar.set_message(msg);
    }

    /// Bytes done so far.
    pub(crate) fn set_position(&mut self, pos: u64) {
        if self.enabled && !self.shown && self.start.elapsed() >= BAR_DELAY {
            self.bar
                .set_draw_target(indicatif::ProgressDrawTarget::stderr());
            self.shown = true;
        }
        self.bar.set_position(pos);
    }
}

impl Drop for DelayedBar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// A warning when `--io-size` (named `flag`) makes moving `total` bytes very slow: every
/// request is one library call (a few microseconds at least), and every write also one
/// `fdatasync` (milliseconds on a disk). Warned above 1024 writes or 2^20 reads.
pub(crate) fn slow_request_warning(
    total: u64,
    io_size: u64,
    writes: bool,
    flag: &str,
) -> Option<String> {
    let requests = total.div_ceil(io_size.max(1));
    let (limit, why) = if writes {
        (
            1024,
            "each write is a separate library call and a separate fdatasync",
        )
    } else {
        (1 << 20, "each read is a separate library call")
    };
    (requests > limit).then(|| {
        format!(
            "{flag} {io_size} means {requests} requests for {}: {why}, so this will be very slow; \
             a larger {flag} (1M or more) is much faster",
            fmt_bytes(total)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_texts_lose_the_rust_suffix() {
        assert_eq!(errno_text(libc::ENOENT), "No such file or directory");
        assert_eq!(
            io_text(&io::Error::from_raw_os_error(libc::ENOSPC)),
            "No space left on device"
        );
        assert_eq!(
            lib_text(&hipfile::Error::Os(libc::EACCES)),
            "Permission denied"
        );
    }

    #[test]
    fn aligned_buffers_are_aligned_and_zeroed() {
        let mut b = AlignedBuf::new(10_000).unwrap();
        assert_eq!(b.as_slice().as_ptr() as usize % PAGE, 0);
        assert_eq!(b.as_slice().len(), 10_000);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        b.as_mut_slice()[9_999] = 1;
        assert_eq!(b.as_slice()[9_999], 1);
    }

    #[test]
    fn rng_is_deterministic_and_in_range() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
            assert!(a.below(13) < 13);
            b.below(13);
        }
        let mut buf = vec![0u8; 4099];
        a.fill_nonzero(&mut buf);
        assert!(buf.iter().all(|&x| x != 0));
    }

    #[test]
    fn byte_units() {
        assert_eq!(fmt_bytes(4096), "4 KiB");
        assert_eq!(fmt_bytes(64 << 20), "64 MiB");
        assert_eq!(fmt_bytes(3 << 29), "1.5 GiB");
        assert_eq!(fmt_bytes(100), "100 B");
        assert_eq!(fmt_bytes(3), "3 B");
        assert_eq!(fmt_bytes(3000), "2.9 KiB");
    }

    #[test]
    fn slow_request_sizes_are_warned_about() {
        assert_eq!(
            slow_request_warning(12 << 10, 3, true, "--io-size").unwrap(),
            "--io-size 3 means 4096 requests for 12 KiB: each write is a separate library call \
             and a separate fdatasync, so this will be very slow; a larger --io-size (1M or more) \
             is much faster"
        );
        assert_eq!(slow_request_warning(12 << 10, 3, false, "--io-size"), None);
        assert_eq!(
            slow_request_warning(1 << 30, 3, false, "--io-size").unwrap(),
            "--io-size 3 means 357913942 requests for 1 GiB: each read is a separate library \
             call, so this will be very slow; a larger --io-size (1M or more) is much faster"
        );
        assert_eq!(
            slow_request_warning(4 << 30, 4096, false, "--io-size"),
            None
        );
        assert_eq!(slow_request_warning(4 << 20, 4096, true, "--io-size"), None);
        assert!(slow_request_warning((4 << 20) + 1, 4096, true, "--io-size").is_some());
    }
}
