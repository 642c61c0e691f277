//! SIGINT and SIGTERM for the subcommands that leave files behind (`cp`, `bench`).
//!
//! The handler only stores the signal's number in an atomic (async-signal-safe); the work
//! loops look at [`pending`] between requests and unwind with an error, their guards remove
//! what they created, and `main` then ends the process by the same signal ([`reraise`]), so
//! the shell sees the usual status (130 for Ctrl-C). The handler is installed with
//! `SA_RESETHAND`: a second Ctrl-C while the tool cleans up terminates it at once. Without
//! `SA_RESTART`, a system call the signal interrupts returns `EINTR`, which the library and
//! the tool retry, so a request in flight finishes before the loop notices.

use std::io;
use std::sync::atomic::{AtomicI32, Ordering};

/// The signal received, 0 for none.
static PENDING: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // An atomic store is async-signal-safe; nothing else happens here.
    PENDING.store(sig, Ordering::Relaxed);
}

/// Catch SIGINT and SIGTERM from now on (once per process; later calls change nothing).
pub(crate) fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // Without a handler the signal keeps its default action: the tool still stops, only
        // without removing what it created.
        let _ = catch(sig, on_signal, libc::SA_RESETHAND);
    }
}

/// Run `handler` on `sig` from now on, with the `sigaction` flags `flags`: the tool's one way
/// of catching a signal (rustix has no `sigaction`). `handler` must do only what is
/// async-signal-safe.
pub(crate) fn catch(
    sig: libc::c_int,
    handler: extern "C" fn(libc::c_int),
    flags: libc::c_int,
) -> io::Result<()> {
    // SAFETY: a zeroed sigaction is a valid value; the handler has the signature sa_handler
    // expects; sigemptyset gets a valid pointer to the mask inside `act`; no old action is
    // asked for.
    let rc = unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = handler as libc::sighandler_t;
        act.sa_flags = flags;
        libc::sigemptyset(&mut act.sa_mask);
        libc::sigaction(sig, &act, std::ptr::null_mut())
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The signal received since [`install`], if any.
pub(crate) fn pending() -> Option<i32> {
    match PENDING.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s),
    }
}

/// The error text of an interruption: "interrupted by SIGINT".
pub(crate) fn describe(sig: i32) -> String {
    let name = match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("interrupted by signal {sig}"),
    };
    format!("interrupted by {name}")
}

/// End the process by `sig` with its default action (after the cleanup is done).
pub(crate) fn reraise(sig: i32) -> ! {
    // SAFETY: restoring the default action and raising a signal are plain system calls;
    // SIGINT's and SIGTERM's default action terminates the process.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
    // Not reached for SIGINT/SIGTERM; the shell's convention otherwise.
    std::process::exit(128 + sig)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(describe(libc::SIGINT), "interrupted by SIGINT");
        assert_eq!(describe(libc::SIGTERM), "interrupted by SIGTERM");
        assert_eq!(describe(1), "interrupted by signal 1");
    }
}
