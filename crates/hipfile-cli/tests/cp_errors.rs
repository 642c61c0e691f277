//! `hipfile cp` on the simulated GPU runtime: a large byte-exact copy, and each failure ends
//! with exit code 1 and one clear line on standard error (`hipfile: <what went wrong>`).
//!
//! Some cases need a small or read-only file system: as root they mount one (tmpfs, else an
//! ext4 loop image; a read-only bind mount, else `chattr +i`); without the means they say
//! "skipping: ..." and pass.

mod common;
use common::{run_hipfile, scratch, text};

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `hipfile --sim=<hipsim> cp ARGS...` with a clean hipfile environment.
fn cp(tmp: &Path, args: &[&Path], extra: &[&str]) -> Output {
    let paths: Vec<&str> = args
        .iter()
        .map(|p| p.to_str().expect("UTF-8 path"))
        .collect();
    let all: Vec<&str> = ["cp"]
        .into_iter()
        .chain(extra.iter().copied())
        .chain(paths)
        .collect();
    run_hipfile(tmp, true, &[], &all)
}

/// Exit code 1 and exactly one line on stderr, `hipfile: ` + something containing each of
/// `needles`.
fn assert_fails(out: &Output, needles: &[&str]) -> String {
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "expected exit code 1: stdout {} stderr {stderr}",
        text(&out.stdout)
    );
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr:?}");
    assert!(stderr.starts_with("hipfile: "), "{stderr:?}");
    for n in needles {
        assert!(stderr.contains(n), "{n:?} not in {stderr:?}");
    }
    stderr
}

/// `len` pseudo-random bytes written to `path` in pieces.
fn random_file(path: &Path, len: usize, seed: u64) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut x = seed | 1;
    let mut piece = vec![0u8; 1 << 20];
    let mut left = len;
    while left > 0 {
        for w in piece.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            w.copy_from_slice(&x.to_le_bytes()[..w.len()]);
        }
        let n = left.min(piece.len());
        f.write_all(&piece[..n]).unwrap();
        left -= n;
    }
    f.flush().unwrap();
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn run(prog: &str, args: &[&str]) -> bool {
    Command::new(prog)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A mount made by a test, unmounted (and its loop image deleted) on drop, panics included.
struct Mounted {
    dir: PathBuf,
    image: Option<PathBuf>,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let d = self.dir.to_str().unwrap();
        if !run("umount", &[d]) {
            let _ = run("umount", &["-l", d]);
        }
        if let Some(img) = &self.image {
            let _ = std::fs::remove_file(img);
        }
    }
}

/// A file system of about 1 MiB at `dir`: tmpfs, else an ext4 loop image; `Err` with the
/// reason when neither can be made.
fn small_fs(tmp: &Path, dir: &Path) -> Result<Mounted, String> {
    std::fs::create_dir_all(dir).unwrap();
    if !is_root() {
        return Err("not root".to_string());
    }
    let d = dir.to_str().unwrap();
    let tmpfs = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs", d])
        .output();
    match &tmpfs {
        Ok(o) if o.status.success() => {
            return Ok(Mounted {
                dir: dir.to_path_buf(),
                image: None,
            })
        }
        _ => {}
    }
    let img = tmp.join("small.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(2 << 20)
        .unwrap();
    let i = img.to_str().unwrap();
    if run("mkfs.ext4", &["-q", "-F", i]) && run("mount", &["-o", "loop", i, d]) {
        return Ok(Mounted {
            dir: dir.to_path_buf(),
            image: Some(img),
        });
    }
    let _ = std::fs::remove_file(&img);
    Err(format!(
        "neither a tmpfs ({}) nor an ext4 loop image could be mounted",
        tmpfs.map_or_else(|e| e.to_string(), |o| text(&o.stderr).trim().to_string())
    ))
}

#[test]
fn copies_256_mib_byte_exact() {
    let tmp = scratch("big");
    let (src, dst) = (tmp.join("src.bin"), tmp.join("dst.bin"));
    // Not a multiple of the piece size nor of 4 KiB: the tail is a short piece.
    let len = (256 << 20) + 12_345;
    random_file(&src, len, 0x5eed);
    let out = cp(&tmp, &[&src, &dst], &["--verify", "-v", "--io-size", "16M"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("verified identical"), "{stdout}");
    assert!(stdout.contains("SIMULATED"), "{stdout}");
    assert_eq!(std::fs::metadata(&dst).unwrap().len(), len as u64);
    // Independent of --verify: compare the bytes here too.
    let (a, b) = (std::fs::read(&src).unwrap(), std::fs::read(&dst).unwrap());
    assert!(a == b, "the copy differs from the source");
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn missing_source() {
    let tmp = scratch("missing");
    let (src, dst) = (tmp.join("nope"), tmp.join("dst"));
    assert_fails(
        &cp(&tmp, &[&src, &dst], &[]),
        &["cannot stat", "nope", "No such file or directory"],
    );
    assert!(
        !dst.exists(),
        "nothing is created when the source is missing"
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn directory_source() {
    let tmp = scratch("dirsrc");
    let src = tmp.join("adir");
    std::fs::create_dir(&src).unwrap();
    let dst = tmp.join("dst");
    assert_fails(&cp(&tmp, &[&src, &dst], &[]), &["adir", "is a directory"]);
    assert!(!dst.exists());
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn dev_full_destination_is_enospc() {
    let tmp = scratch("devfull");
    let src = tmp.join("src");
    random_file(&src, 1 << 20, 3);
    assert_fails(
        &cp(&tmp, &[&src, Path::new("/dev/full")], &[]),
        &["error writing '/dev/full'", "No space left on device"],
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn full_file_system() {
    let tmp = scratch("full");
    let src = tmp.join("src");
    random_file(&src, 4 << 20, 4);
    let mnt = tmp.join("mnt");
    let mounted = match small_fs(&tmp, &mnt) {
        Ok(m) => m,
        Err(why) => {
            println!("skipping: cannot create a small file system ({why})");
            std::fs::remove_dir_all(&tmp).unwrap();
            return;
        }
    };
    let dst = mnt.join("dst");
    assert_fails(
        &cp(&tmp, &[&src, &dst], &[]),
        &["error writing", "dst", "No space left on device"],
    );
    drop(mounted);
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// Undoes what made the destination read-only, on drop.
struct ReadOnly {
    /// A read-only bind mount (unmounted on drop).
    _bind: Option<Mounted>,
    /// A file given the immutable attribute.
    immutable: Option<PathBuf>,
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        if let Some(p) = &self.immutable {
            let _ = run("chattr", &["-i", p.to_str().unwrap()]);
        }
    }
}

/// Make `dir/dst` read-only: mode 0444 when not root; as root (which ignores mode bits) a
/// read-only bind mount of `dir` at `tmp/ro`, else `chattr +i`. Returns the destination path
/// to use, the error text expected, and the guard; `Err` when no way works.
fn make_read_only(tmp: &Path, dir: &Path) -> Result<(PathBuf, &'static str, ReadOnly), String> {
    let file = dir.join("dst");
    if !is_root() {
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
        return Ok((
            file,
            "Permission denied",
            ReadOnly {
                _bind: None,
                immutable: None,
            },
        ));
    }
    let ro = tmp.join("ro");
    std::fs::create_dir(&ro).unwrap();
    let (d, r) = (dir.to_str().unwrap(), ro.to_str().unwrap());
    if run("mount", &["--bind", d, r]) {
        let m = Mounted {
            dir: ro.clone(),
            image: None,
        };
        if run("mount", &["-o", "remount,ro,bind", r]) {
            return Ok((
                ro.join("dst"),
                "Read-only file system",
                ReadOnly {
                    _bind: Some(m),
                    immutable: None,
                },
            ));
        }
    }
    if run("chattr", &["+i", file.to_str().unwrap()]) {
        return Ok((
            file.clone(),
            "Operation not permitted",
            ReadOnly {
                _bind: None,
                immutable: Some(file),
            },
        ));
    }
    Err("neither a read-only bind mount nor chattr +i works".to_string())
}

#[test]
fn read_only_destination() {
    let tmp = scratch("ro");
    let src = tmp.join("src");
    random_file(&src, 1 << 20, 5);
    let dir = tmp.join("dir");
    std::fs::create_dir(&dir).unwrap();
    let original = b"must stay as it is".to_vec();
    std::fs::write(dir.join("dst"), &original).unwrap();
    let (dst, why, guard) = match make_read_only(&tmp, &dir) {
        Ok(x) => x,
        Err(e) => {
            println!("skipping: cannot make a read-only destination ({e})");
            std::fs::remove_dir_all(&tmp).unwrap();
            return;
        }
    };
    assert_fails(
        &cp(&tmp, &[&src, &dst], &[]),
        &["cannot open", "for writing", why],
    );
    assert_eq!(
        std::fs::read(&dst).unwrap(),
        original,
        "the read-only destination is untouched"
    );
    drop(guard);
    std::fs::remove_dir_all(&tmp).unwrap();
}
