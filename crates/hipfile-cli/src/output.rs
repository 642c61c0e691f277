//! Everything the tool prints, written without ever panicking.
//!
//! `println!` panics when standard output cannot be written, for instance a pipe whose reader
//! has gone (`hipfile check | head -1`), and the tool would die with status 101 and a
//! backtrace, leaving its temporary files behind. Every line goes through [`outln!`] and
//! [`errln!`] instead:
//!
//! - The first failed write of standard output is remembered and the rest of the output is
//!   dropped; the subcommand carries on to its end (its guards remove what it created), and
//!   `main` then ends the process ([`stdout_error`]): by `SIGPIPE` when the reader has gone,
//!   as a C program in a pipeline ends (the shell's status 141, no message), with one line
//!   and status 1 for any other error (`ENOSPC` when standard output is a full disk).
//! - A line standard error cannot take is dropped: there is nowhere left to say so.
//!
//! The process keeps Rust's `SIGPIPE` disposition (ignored) until then, so a write to a
//! closed pipe returns `EPIPE` wherever it happens, in the tool or in the library.

use std::fmt;
use std::io::{self, Write as _};
use std::sync::atomic::{AtomicI32, Ordering};

/// The `errno` of the first failed write of standard output; 0: none failed.
static STDOUT_ERROR: AtomicI32 = AtomicI32::new(0);

/// Write to standard output, unless an earlier write failed; a failure is remembered.
pub(crate) fn out(args: fmt::Arguments<'_>) {
    if STDOUT_ERROR.load(Ordering::Relaxed) != 0 {
        return;
    }
    let mut stdout = io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        // A failure that is not a system call's (none is expected) counts as EIO.
        let errno = e.raw_os_error().filter(|&n| n != 0).unwrap_or(libc::EIO);
        let _ = STDOUT_ERROR.compare_exchange(0, errno, Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// Write to standard output (see [`out`]); `false` once standard output has failed, so that
/// a loop that only prints (`hipfile stats --watch`) can stop.
pub(crate) fn out_str(text: &str) -> bool {
    out(format_args!("{text}"));
    stdout_error().is_none()
}

/// Write to standard error; a failure is ignored.
pub(crate) fn err(args: fmt::Arguments<'_>) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// The `errno` of the first failed write of standard output (`EPIPE`: the reader has gone).
pub(crate) fn stdout_error() -> Option<i32> {
    match STDOUT_ERROR.load(Ordering::Relaxed) {
        0 => None,
        e => Some(e),
    }
}

/// `println!` that never panics: see [`out`].
macro_rules! outln {
    () => {
        $crate::output::out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` that never panics: see [`err`].
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::output::err(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {errln, outln};
