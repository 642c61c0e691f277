//! The variables of cuFile's that name a file, as this library may read them: not at all in
//! secure-execution mode, where a set-user-ID program must not read or write where its caller
//! says. Below the log and the configuration file, which both read them.

/// cuFile's environment variables that name a file: ignored in secure-execution mode.
pub(crate) const PATH_VARIABLES: &[&str] = &["CUFILE_ENV_PATH_JSON", "CUFILE_LOGFILE_PATH"];

/// Whether this process runs in secure-execution mode (`getauxval(AT_SECURE)`: a set-user-ID,
/// set-group-ID or file-capability program), whose environment belongs to a less privileged
/// user. The same few lines as libhipfile's own check: this library does not link the hipfile
/// crate (it reaches the engine through libhipfile's C ABI only), and exporting a C function
/// from libhipfile for one flag would widen an ABI that must stay exactly hipFile's.
pub(crate) fn secure_execution() -> bool {
    static SECURE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    // SAFETY: getauxval reads the auxiliary vector the kernel gave the process; it has no
    // preconditions and answers 0 for a type it does not know.
    *SECURE.get_or_init(|| unsafe { libc::getauxval(libc::AT_SECURE) } != 0)
}

/// `name`, one of [`PATH_VARIABLES`], from the environment (empty included); `None` when
/// unset or in secure-execution mode, where a set-user-ID program must not let its caller
/// choose which file it reads or writes (as glibc ignores `LD_PRELOAD` there).
pub(crate) fn path_var(name: &str) -> Option<String> {
    debug_assert!(PATH_VARIABLES.contains(&name));
    if secure_execution() {
        return None;
    }
    std::env::var(name).ok()
}
