//! What this process may trust: whether it runs in secure-execution mode, the environment
//! variables that name files (ignored in that mode), and its own credentials (who may read
//! its statistics).
//!
//! Secure-execution mode is the kernel's `AT_SECURE` flag: set for a set-user-ID or
//! set-group-ID program, one with file capabilities, or one a security module marks. The
//! environment then belongs to a less privileged user, so glibc ignores `LD_PRELOAD`,
//! `LD_LIBRARY_PATH` and their kind; we ignore, the same way, every one of our variables that
//! names a library, a file or a directory ([`PATH_VARIABLES`]). Variables that only tune (a
//! size, a boolean, a log filter) are still read.

use std::sync::OnceLock;

/// Our environment variables that name a library, a file or a directory: ignored in
/// secure-execution mode. (`libcufile.so.0` has its own: `CUFILE_ENV_PATH_JSON`,
/// `CUFILE_LOGFILE_PATH`.)
pub(crate) const PATH_VARIABLES: &[&str] = &[
    "HIPFILE_HIP_LIBRARY",
    "HIPFILE_CUDA_LIBRARY",
    "HIPFILE_CUFILE_LIBRARY",
    "HIPFILE_LOG_FILE",
];

/// Whether this process runs in secure-execution mode (`getauxval(AT_SECURE)`), read once.
pub(crate) fn secure_execution() -> bool {
    static SECURE: OnceLock<bool> = OnceLock::new();
    // SAFETY: getauxval reads the auxiliary vector the kernel gave the process; it has no
    // preconditions and answers 0 for a type it does not know.
    *SECURE.get_or_init(|| unsafe { libc::getauxval(libc::AT_SECURE) } != 0)
}

/// The value of `name`, one of [`PATH_VARIABLES`]: `None` when unset, empty, or in
/// secure-execution mode (see [`ignored_path_variables`] for the one log line).
pub(crate) fn path_var(name: &str) -> Option<std::ffi::OsString> {
    debug_assert!(
        PATH_VARIABLES.contains(&name),
        "{name} is not a path variable"
    );
    if secure_execution() {
        return None;
    }
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// The [`PATH_VARIABLES`] that are set but ignored because of secure-execution mode (empty
/// outside it).
pub(crate) fn ignored_path_variables() -> Vec<&'static str> {
    if !secure_execution() {
        return Vec::new();
    }
    PATH_VARIABLES
        .iter()
        .copied()
        .filter(|n| std::env::var_os(n).is_some())
        .collect()
}

/// The identity of a process, as the kernel applies it when one process inspects another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Credentials {
    /// Real, effective and saved user ids.
    pub uids: [u32; 3],
    /// Real, effective and saved group ids.
    pub gids: [u32; 3],
    /// `PR_GET_DUMPABLE` is 1: the kernel lets processes of the same user inspect this one
    /// (false after a set-user-ID or set-group-ID `exec`, a change of credentials, or
    /// `PR_SET_DUMPABLE` 0).
    pub dumpable: bool,
}

/// This process's credentials, now (they can change: read them at each use).
pub(crate) fn own_credentials() -> Credentials {
    let (mut ruid, mut euid, mut suid) = (0, 0, 0);
    let (mut rgid, mut egid, mut sgid) = (0, 0, 0);
    // SAFETY: valid out-pointers; getresuid/getresgid cannot fail with them.
    unsafe {
        libc::getresuid(&mut ruid, &mut euid, &mut suid);
        libc::getresgid(&mut rgid, &mut egid, &mut sgid);
    }
    // SAFETY: PR_GET_DUMPABLE takes no further argument and returns 0, 1 or 2.
    let dumpable = unsafe { libc::prctl(libc::PR_GET_DUMPABLE) } == 1;
    Credentials {
        uids: [ruid, euid, suid],
        gids: [rgid, egid, sgid],
        dumpable,
    }
}

/// This process's effective user id.
pub(crate) fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_run_is_not_secure_and_reads_its_variables() {
        assert!(!secure_execution(), "cargo test is not set-user-ID");
        assert!(ignored_path_variables().is_empty());
        let c = own_credentials();
        assert_eq!(c.uids[1], effective_uid());
        assert!(c.dumpable);
    }
}
