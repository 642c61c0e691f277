//! `hipfile cp SRC DST`: copy a file through GPU device memory (AMD's `aiscp`): each piece
//! is read from SRC into device memory with `hipFileRead` and written to DST from there with
//! `hipFileWrite`. Host-only (no GPU runtime), the same happens through host memory.

use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use hipfile::api::{gpu_runtime, DeviceMemory, DriverGuard, RegisteredFile};
use hipfile::runtime::Platform;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::util::{
    fail, fdatasync, fmt_bytes, io_text, lib_text, stdout_is_terminal, AlignedBuf, CliError,
    CliResult, PAGE,
};
use crate::CpArgs;

/// Files above this size get a progress bar (on a terminal).
const PROGRESS_MIN: u64 = 256 << 20;

/// Where the pieces go between the two files.
enum Staging {
    Device(DeviceMemory),
    Host(AlignedBuf),
}

fn quote(p: &Path) -> String {
    format!("'{}'", p.display())
}

/// The destination: DST itself, or DST/<name of SRC> when DST is a directory (as `cp` does).
fn destination(src: &Path, dst: &Path) -> CliResult<PathBuf> {
    if dst.is_dir() {
        match src.file_name() {
            Some(name) => Ok(dst.join(name)),
            None => fail(format!(
                "cannot copy {} into the directory {}",
                quote(src),
                quote(dst)
            )),
        }
    } else {
        Ok(dst.to_path_buf())
    }
}

/// Run `hipfile cp`.
pub fn run(a: &CpArgs) -> CliResult<()> {
    let src = a.src.as_path();
    let meta = fs::metadata(src)
        .map_err(|e| CliError(format!("cannot stat {}: {}", quote(src), io_text(&e))))?;
    if meta.is_dir() {
        return fail(format!("{} is a directory", quote(src)));
    }
    let dst = destination(src, &a.dst)?;
    let dst_existed = match fs::metadata(&dst) {
        Ok(m) if m.dev() == meta.dev() && m.ino() == meta.ino() => {
            return fail(format!(
                "{} and {} are the same file",
                quote(src),
                quote(&dst)
            ))
        }
        Ok(_) => true,
        Err(_) => false,
    };
    let sf = File::open(src).map_err(|e| {
        CliError(format!(
            "cannot open {} for reading: {}",
            quote(src),
            io_text(&e)
        ))
    })?;
    let df = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o644)
        .open(&dst)
        .map_err(|e| {
            let (q, why) = (quote(&dst), io_text(&e));
            CliError(if dst_existed {
                format!("cannot open {q} for writing: {why}")
            } else {
                format!("cannot create regular file {q}: {why}")
            })
        })?;

    let _driver = DriverGuard::open();
    let rs = RegisteredFile::register(&sf).map_err(|e| {
        CliError(format!(
            "cannot register {} with hipfile: {}",
            quote(src),
            lib_text(&e)
        ))
    })?;
    let rd = RegisteredFile::register(&df).map_err(|e| {
        CliError(format!(
            "cannot register {} with hipfile: {}",
            quote(&dst),
            lib_text(&e)
        ))
    })?;

    let size = meta.len();
    let piece = a.io_size.min(size.max(1).next_multiple_of(PAGE as u64)) as usize;
    let rt = gpu_runtime();
    let host_only = rt.platform() == Platform::Host;
    let mut staging = if host_only {
        Staging::Host(AlignedBuf::new(piece)?)
    } else {
        Staging::Device(DeviceMemory::alloc(piece).map_err(|e| {
            CliError(format!(
                "cannot allocate {} of device memory: {}",
                fmt_bytes(piece as u64),
                lib_text(&e)
            ))
        })?)
    };

    let bar = if size > PROGRESS_MIN && stdout_is_terminal() {
        let b = ProgressBar::with_draw_target(Some(size), ProgressDrawTarget::stderr());
        b.set_style(
            ProgressStyle::with_template(
                "{bytes}/{total_bytes} {wide_bar} {binary_bytes_per_sec} {eta}",
            )
            .expect("valid template"),
        );
        b
    } else {
        ProgressBar::hidden()
    };

    let read_err =
        |e: hipfile::Error| CliError(format!("error reading {}: {}", quote(src), lib_text(&e)));
    let write_err =
        |e: hipfile::Error| CliError(format!("error writing {}: {}", quote(&dst), lib_text(&e)));
    let start = Instant::now();
    let mut off = 0u64;
    loop {
        let n = match &mut staging {
            Staging::Device(m) => rs.read_device(m, piece, off, 0),
            Staging::Host(b) => rs.read_host(b.as_mut_slice(), off),
        }
        .map_err(read_err)?;
        if n == 0 {
            break;
        }
        let mut done = 0;
        while done < n {
            let w = match &staging {
                Staging::Device(m) => rd.write_device(m, n - done, off + done as u64, done),
                Staging::Host(b) => rd.write_host(&b.as_slice()[done..n], off + done as u64),
            }
            .map_err(write_err)?;
            if w == 0 {
                return fail(format!("error writing {}: no progress", quote(&dst)));
            }
            done += w;
        }
        off += n as u64;
        bar.set_position(off);
    }
    // Writes are durable at return unless HIPFILE_FALLBACK_SYNC_WRITES=false; make sure anyway.
    fdatasync(df.as_raw_fd())
        .map_err(|e| CliError(format!("error writing {}: {}", quote(&dst), io_text(&e))))?;
    let elapsed = start.elapsed();
    bar.finish_and_clear();
    drop((rs, rd, staging));

    if a.verify {
        verify(src, &dst)?;
    }
    if a.verbose {
        let secs = elapsed.as_secs_f64();
        let via = if host_only {
            format!(
                "host memory (host-only, no GPU runtime: {})",
                hipfile::runtime::loader::choice().reason
            )
        } else if rt.is_simulated() {
            format!(
                "device memory of the SIMULATED GPU runtime ({})",
                rt.describe()
            )
        } else {
            format!("GPU device memory ({})", rt.describe())
        };
        println!(
            "{} -> {}: {} in {:.4} s, {:.3} GiB/s, through {}{}",
            quote(src),
            quote(&dst),
            fmt_bytes(off),
            secs,
            if secs > 0.0 {
                off as f64 / (1u64 << 30) as f64 / secs
            } else {
                0.0
            },
            via,
            if a.verify { "; verified identical" } else { "" }
        );
    }
    Ok(())
}

/// Compare the two files byte for byte.
fn verify(src: &Path, dst: &Path) -> CliResult<()> {
    let open = |p: &Path| {
        File::open(p)
            .map_err(|e| CliError(format!("verify: cannot open {}: {}", quote(p), io_text(&e))))
    };
    let (mut a, mut b) = (open(src)?, open(dst)?);
    const CHUNK: usize = 8 << 20;
    let (mut ba, mut bb) = (vec![0u8; CHUNK], vec![0u8; CHUNK]);
    let mut pos = 0u64;
    loop {
        let na = read_full(&mut a, &mut ba).map_err(|e| {
            CliError(format!(
                "verify: error reading {}: {}",
                quote(src),
                io_text(&e)
            ))
        })?;
        let nb = read_full(&mut b, &mut bb).map_err(|e| {
            CliError(format!(
                "verify: error reading {}: {}",
                quote(dst),
                io_text(&e)
            ))
        })?;
        let common = na.min(nb);
        if let Some(i) = ba[..common]
            .iter()
            .zip(&bb[..common])
            .position(|(x, y)| x != y)
        {
            return fail(format!(
                "verify failed: {} and {} differ at byte {}",
                quote(src),
                quote(dst),
                pos + i as u64
            ));
        }
        if na != nb {
            return fail(format!(
                "verify failed: {} and {} differ in size",
                quote(src),
                quote(dst)
            ));
        }
        if na == 0 {
            return Ok(());
        }
        pos += na as u64;
    }
}

fn read_full(f: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match f.read(&mut buf[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destination_inside_a_directory() {
        let d = std::env::temp_dir();
        assert_eq!(
            destination(Path::new("/a/b.dat"), &d).unwrap(),
            d.join("b.dat")
        );
        assert_eq!(
            destination(Path::new("/a/b.dat"), Path::new("/nonexistent/x")).unwrap(),
            Path::new("/nonexistent/x")
        );
    }

    #[test]
    fn verify_finds_the_first_difference() {
        let dir = std::env::temp_dir().join(format!("hipfile-cli-verify-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a"), dir.join("b"));
        fs::write(&a, b"hello world").unwrap();
        fs::write(&b, b"hello world").unwrap();
        verify(&a, &b).unwrap();
        fs::write(&b, b"hello_world").unwrap();
        assert!(verify(&a, &b).unwrap_err().0.contains("differ at byte 5"));
        fs::write(&b, b"hello world!").unwrap();
        assert!(verify(&a, &b).unwrap_err().0.contains("differ in size"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
