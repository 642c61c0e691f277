//! The files and directories the tool creates for itself: the self-tests' files (`check`,
//! `check --lib`), the `O_DIRECT` probe of `check DIR`, `bench`'s scratch file, the folder of
//! the probe's log.
//!
//! Each is created exclusively (`O_CREAT | O_EXCL`, or `mkdir`): never an existing path and
//! never through a symbolic link, whoever planted it. Names are unpredictable (another user
//! cannot take them first), files are owner-only (0600) unless the user named the file,
//! folders 0700, and every descriptor is close-on-exec (the standard library opens them so).
//! A file that needs no name never gets one (`O_TMPFILE`, or else it loses it as soon as it is
//! open); one that does is removed only while its name still leads to the file the tool created.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::hash::{BuildHasher, RandomState};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Names tried before giving up (each one is new and random).
const ATTEMPTS: u32 = 100;

/// A name nobody can guess: `PREFIX` + 16 hex digits + `SUFFIX`.
fn unique_name(prefix: &str, suffix: &str) -> String {
    // A RandomState's keys come from the system's random source; the pid and the clock make
    // the hash differ between processes and calls even where they would not.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let n = RandomState::new().hash_one((std::process::id(), now));
    format!("{prefix}{n:016x}{suffix}")
}

/// Create `path` for reading and writing, exclusively, with `mode` and the extra open
/// `flags`: `O_CREAT | O_EXCL` fails with `EEXIST` on any existing name, and `O_NOFOLLOW`
/// says so in the descriptor too (the library registers such descriptors).
fn create_exclusive(path: &Path, mode: u32, flags: i32) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(flags | libc::O_NOFOLLOW)
        .open(path)
}

/// What the tool created at a path: removed when dropped (unless [`Created::keep`] was
/// called), and only while the path still names that file.
#[derive(Debug)]
pub(crate) struct Created {
    path: PathBuf,
    id: (u64, u64),
    remove: bool,
}

impl Created {
    fn new(path: PathBuf, file: &File) -> io::Result<Created> {
        let m = file.metadata()?;
        Ok(Created {
            path,
            id: (m.dev(), m.ino()),
            remove: true,
        })
    }

    /// Where it is.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Leave it in place when dropped.
    pub(crate) fn keep(&mut self) {
        self.remove = false;
    }

    /// Whether the path still leads to the file created (without following a link there).
    fn is_ours(&self) -> bool {
        fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.id)
    }

    /// Open the file again by its name with `options` and the extra open `flags` (`O_DIRECT`,
    /// another access mode): only the file the tool created, never a link or a file put there
    /// since. The name is looked up once without following a link (`O_PATH | O_NOFOLLOW`,
    /// which opens nothing: not even a FIFO or device put in its place), checked, and the file
    /// opened through that handle (`/proc/self/fd`).
    pub(crate) fn reopen(&self, options: &mut OpenOptions, flags: i32) -> io::Result<File> {
        let handle = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_NOFOLLOW)
            .open(&self.path)?;
        let m = handle.metadata()?;
        if (m.dev(), m.ino()) != self.id {
            return Err(io::Error::other(
                "it is no longer the file this run created",
            ));
        }
        options
            .custom_flags(flags)
            .open(format!("/proc/self/fd/{}", handle.as_raw_fd()))
    }
}

impl Created {
    /// Remove it now: `Ok(true)` when removed, `Ok(false)` when the path no longer leads to
    /// it (nothing is removed then).
    pub(crate) fn remove_now(mut self) -> io::Result<bool> {
        self.remove = false;
        if !self.is_ours() {
            return Ok(false);
        }
        fs::remove_file(&self.path).map(|()| true)
    }
}

impl Drop for Created {
    fn drop(&mut self) {
        if self.remove && self.is_ours() {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// A new file at exactly `path`, created exclusively with `mode` (`bench --file` naming a
/// file that does not exist yet).
pub(crate) fn create_at(path: &Path, mode: u32) -> io::Result<(File, Created)> {
    let f = create_exclusive(path, mode, 0)?;
    let c = Created::new(path.to_path_buf(), &f)?;
    Ok((f, c))
}

/// A new owner-only file in `dir` under a fresh name `PREFIX<random>SUFFIX`, with the extra
/// open `flags`.
pub(crate) fn create_named(
    dir: &Path,
    prefix: &str,
    suffix: &str,
    flags: i32,
) -> io::Result<(File, Created)> {
    let mut last = io::Error::from_raw_os_error(libc::EEXIST);
    for _ in 0..ATTEMPTS {
        let path = dir.join(unique_name(prefix, suffix));
        match create_exclusive(&path, 0o600, flags) {
            Ok(f) => {
                let c = Created::new(path, &f)?;
                return Ok((f, c));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// A new owner-only file in `dir` that has no name, opened with the extra `flags`
/// (`O_TMPFILE`): nothing is ever left to clean up. Where the file system cannot make one, the
/// file is created under a fresh name and unlinked at once.
pub(crate) fn anonymous(dir: &Path, flags: i32) -> io::Result<File> {
    let tmpfile = OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(flags | libc::O_TMPFILE)
        .open(dir);
    match tmpfile {
        // EOPNOTSUPP: this file system has no O_TMPFILE; EISDIR: nor has the kernel.
        Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR)) => {
            let (f, created) = create_named(dir, ".hipfile-", ".tmp", flags)?;
            drop(created);
            Ok(f)
        }
        other => other,
    }
}

/// A new folder (0700) in `dir` under a fresh name, removed with what it holds when dropped.
#[derive(Debug)]
pub(crate) struct PrivateDir(PathBuf);

impl PrivateDir {
    /// Create it.
    pub(crate) fn new(dir: &Path, prefix: &str) -> io::Result<PrivateDir> {
        let mut last = io::Error::from_raw_os_error(libc::EEXIST);
        for _ in 0..ATTEMPTS {
            let path = dir.join(unique_name(prefix, ""));
            match DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(PrivateDir(path)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }

    /// Where it is.
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("hipfile-cli-temp-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn names_are_fresh() {
        let a = unique_name("p-", ".x");
        let b = unique_name("p-", ".x");
        assert_ne!(a, b);
        assert!(
            a.starts_with("p-") && a.ends_with(".x") && a.len() == 2 + 16 + 2,
            "{a}"
        );
    }

    #[test]
    fn named_files_are_owner_only_and_removed_only_while_ours() {
        let d = scratch("named");
        let (f, c) = create_named(&d, "t-", ".dat", 0).unwrap();
        assert_eq!(f.metadata().unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(names(&d).len(), 1);
        drop(c);
        assert_eq!(names(&d), Vec::<String>::new(), "removed when dropped");

        // Replaced behind its back: the other file stays.
        let (_f, c) = create_named(&d, "t-", ".dat", 0).unwrap();
        let p = c.path().to_path_buf();
        fs::remove_file(&p).unwrap();
        fs::write(&p, b"someone else's").unwrap();
        assert_eq!(
            c.reopen(OpenOptions::new().read(true), 0)
                .unwrap_err()
                .to_string(),
            "it is no longer the file this run created"
        );
        drop(c);
        assert_eq!(fs::read(&p).unwrap(), b"someone else's");

        // Kept.
        let (_f, mut c) = create_named(&d, "t-", ".dat", 0).unwrap();
        c.keep();
        let p2 = c.path().to_path_buf();
        drop(c);
        assert!(p2.is_file());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn create_at_never_opens_an_existing_path_or_link() {
        let d = scratch("at");
        let target = d.join("target");
        fs::write(&target, b"keep me").unwrap();
        std::os::unix::fs::symlink(&target, d.join("link")).unwrap();
        for name in ["target", "link"] {
            let e = create_at(&d.join(name), 0o644).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EEXIST), "{name}");
        }
        assert_eq!(fs::read(&target).unwrap(), b"keep me");
        let (_f, c) = create_at(&d.join("new"), 0o644).unwrap();
        drop(c);
        assert!(!d.join("new").exists());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn anonymous_files_leave_no_name() {
        let d = scratch("anon");
        let f = anonymous(&d, 0).unwrap();
        assert_eq!(f.metadata().unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(f.metadata().unwrap().nlink(), 0);
        assert_eq!(names(&d), Vec::<String>::new());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn private_dirs_are_owner_only_and_removed() {
        let d = scratch("dir");
        let p = PrivateDir::new(&d, "x-").unwrap();
        let meta = fs::symlink_metadata(p.path()).unwrap();
        assert!(meta.is_dir());
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        fs::write(p.path().join("log"), b"x").unwrap();
        drop(p);
        assert_eq!(names(&d), Vec::<String>::new());
        fs::remove_dir_all(&d).unwrap();
    }
}
