//! Who this process is, as the kernel applies it when another process inspects it: its user
//! and group ids and whether it is dumpable (who may read its statistics).

/// The identity of a process, as the kernel applies it when one process inspects another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Credentials {
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
pub fn own_credentials() -> Credentials {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_run_is_dumpable() {
        let c = own_credentials();
        // SAFETY: geteuid has no preconditions.
        assert_eq!(c.uids[1], unsafe { libc::geteuid() });
        assert!(c.dumpable);
    }
}
