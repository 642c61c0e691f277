//! `hipfile cp SRC DST`: copy a file through GPU device memory (AMD's `aiscp`): each piece
//! is read from SRC into device memory with `hipFileRead` and written to DST from there with
//! `hipFileWrite`. When no GPU runtime is usable the same happens through host memory, with a
//! warning on standard error every time (`--require-gpu` makes it an error).
//!
//! A destination that `cp` created is removed when the copy fails or is interrupted (SIGINT,
//! SIGTERM); a destination that existed before is left as it is then, and the message says
//! it is incomplete.

use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use hipfile::api::{DeviceMemory, DriverGuard, Platform, RegisteredFile};

use crate::output::{errln, outln};
use crate::temp::{self, Created};
use crate::util::{
    fail, fmt_bytes, io_text, lib_text, slow_request_warning, stderr_is_terminal, AlignedBuf,
    CliError, CliResult, DelayedBar, PAGE,
};
use crate::{signals, CpArgs};

/// Where the pieces go between the two files.
enum Staging {
    Device(DeviceMemory),
    Host(AlignedBuf),
}

fn quote(p: &Path) -> String {
    format!("'{}'", p.display())
}

/// The destination: DST itself, or `DST/<name of SRC>` when DST is a directory (as `cp` does).
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

/// DST opened for writing and not truncated yet: a file created now with `mode` (less the
/// umask, as `cp` creates it), with what removes it again, or the file already there.
fn open_destination(dst: &Path, mode: u32) -> CliResult<(File, Option<Created>)> {
    match temp::create_at(dst, mode) {
        Ok((f, created)) => return Ok((f, Some(created))),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return fail(format!(
                "cannot create regular file {}: {}",
                quote(dst),
                io_text(&e)
            ))
        }
    }
    OpenOptions::new()
        .write(true)
        .open(dst)
        .map(|f| (f, None))
        .map_err(|e| {
            CliError(format!(
                "cannot open {} for writing: {}",
                quote(dst),
                io_text(&e)
            ))
        })
}

/// Run `hipfile cp`.
pub(crate) fn run(a: &CpArgs) -> CliResult<()> {
    signals::install();
    let src = a.src.as_path();
    let meta = fs::metadata(src)
        .map_err(|e| CliError(format!("cannot stat {}: {}", quote(src), io_text(&e))))?;
    if meta.is_dir() {
        return fail(format!("{} is a directory", quote(src)));
    }
    let dst = destination(src, &a.dst)?;
    if let Ok(m) = fs::metadata(&dst) {
        if m.dev() == meta.dev() && m.ino() == meta.ino() {
            return fail(format!(
                "{} and {} are the same file",
                quote(src),
                quote(&dst)
            ));
        }
    }
    // Decided before DST is touched: --require-gpu refuses without creating anything.
    let choice = hipfile::api::runtime_report();
    let host_only = choice.platform == Platform::Host;
    if host_only {
        if a.require_gpu {
            return fail(format!(
                "no GPU runtime is usable ({}): --require-gpu refuses to copy through host memory",
                choice.reason
            ));
        }
        errln!(
            "hipfile: warning: no GPU runtime is usable ({}): copying through host memory, not GPU memory",
            choice.reason
        );
    }
    if !host_only {
        let count = choice.device_count.max(0);
        if a.device >= count as u32 {
            return fail(format!(
                "--device {}: the GPU runtime has {count} device(s)",
                a.device
            ));
        }
    }
    if let Some(w) = slow_request_warning(meta.len(), a.io_size, true, "--io-size") {
        errln!("hipfile: warning: {w}");
    }
    let sf = File::open(src).map_err(|e| {
        CliError(format!(
            "cannot open {} for reading: {}",
            quote(src),
            io_text(&e)
        ))
    })?;
    let (df, mut created) = open_destination(&dst, meta.mode() & 0o777)?;
    // The names were compared above; the open files decide (DST may name SRC by now), before
    // anything of DST is truncated.
    let (src_meta, dst_meta) = (sf.metadata(), df.metadata());
    if let (Ok(s), Ok(d)) = (&src_meta, &dst_meta) {
        if (s.dev(), s.ino()) == (d.dev(), d.ino()) {
            return fail(format!(
                "{} and {} are the same file",
                quote(src),
                quote(&dst)
            ));
        }
    }
    // A regular file is emptied first (devices such as /dev/null have no length to cut).
    if created.is_none() && dst_meta.is_ok_and(|m| m.is_file()) {
        df.set_len(0)
            .map_err(|e| CliError(format!("cannot truncate {}: {}", quote(&dst), io_text(&e))))?;
    }
    let copied = copy(a, src, &sf, &dst, &df, meta.len(), host_only);
    drop(df);
    let copied = copied.and_then(|c| {
        if let Some(sig) = signals::pending() {
            return fail(signals::describe(sig));
        }
        if a.verify {
            verify(src, &dst)?;
        }
        Ok(c)
    });
    let (bytes, secs) = match copied {
        Ok(c) => c,
        Err(CliError(msg)) => {
            // The destination is incomplete (or, after --verify, wrong). One this run created
            // is removed, unless another file took its name meanwhile.
            return Err(CliError(match created.take().map(Created::remove_now) {
                Some(Ok(true)) => format!("{msg}; removed the incomplete {}", quote(&dst)),
                Some(Err(e)) => format!(
                    "{msg}; {} is incomplete and could not be removed: {}",
                    quote(&dst),
                    io_text(&e)
                ),
                Some(Ok(false)) | None => format!("{msg}; {} is incomplete", quote(&dst)),
            }));
        }
    };
    if let Some(c) = created.as_mut() {
        c.keep();
    }
    if a.verbose {
        let via = if host_only {
            format!("host memory (host-only, no GPU runtime: {})", choice.reason)
        } else if choice.simulated {
            format!(
                "device memory of the SIMULATED GPU runtime ({})",
                choice.description
            )
        } else {
            format!("GPU device memory ({})", choice.description)
        };
        outln!(
            "{} -> {}: {} in {:.4} s, {:.3} GiB/s, through {}{}",
            quote(src),
            quote(&dst),
            fmt_bytes(bytes),
            secs,
            if secs > 0.0 {
                bytes as f64 / (1u64 << 30) as f64 / secs
            } else {
                0.0
            },
            via,
            if a.verify { "; verified identical" } else { "" }
        );
    }
    Ok(())
}

/// The copy itself: bytes copied and seconds taken. Stops with an error between requests
/// when a signal arrived.
fn copy(
    a: &CpArgs,
    src: &Path,
    sf: &File,
    dst: &Path,
    df: &File,
    size: u64,
    host_only: bool,
) -> CliResult<(u64, f64)> {
    let _driver = DriverGuard::open();
    let rs = RegisteredFile::register(sf).map_err(|e| {
        CliError(format!(
            "cannot register {} with hipfile: {}",
            quote(src),
            lib_text(&e)
        ))
    })?;
    let rd = RegisteredFile::register(df).map_err(|e| {
        CliError(format!(
            "cannot register {} with hipfile: {}",
            quote(dst),
            lib_text(&e)
        ))
    })?;

    let piece = a.io_size.min(size.max(1).next_multiple_of(PAGE as u64)) as usize;
    let mut staging = if host_only {
        Staging::Host(AlignedBuf::new(piece)?)
    } else {
        hipfile::api::set_device(a.device as i32)
            .map_err(|e| CliError(format!("cannot use device {}: {e}", a.device)))?;
        Staging::Device(DeviceMemory::alloc(piece).map_err(|e| {
            CliError(format!(
                "cannot allocate {} of device memory: {}",
                fmt_bytes(piece as u64),
                lib_text(&e)
            ))
        })?)
    };

    let mut bar = DelayedBar::new(
        size,
        "{bytes}/{total_bytes} {wide_bar} {binary_bytes_per_sec} {eta}",
        !a.quiet && stderr_is_terminal(),
    );

    let read_err =
        |e: hipfile::Error| CliError(format!("error reading {}: {}", quote(src), lib_text(&e)));
    let write_err =
        |e: hipfile::Error| CliError(format!("error writing {}: {}", quote(dst), lib_text(&e)));
    let start = Instant::now();
    let mut off = 0u64;
    loop {
        if let Some(sig) = signals::pending() {
            return fail(signals::describe(sig));
        }
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
                return fail(format!("error writing {}: no progress", quote(dst)));
            }
            done += w;
        }
        off += n as u64;
        bar.set_position(off);
    }
    // Writes are durable at return unless HIPFILE_FALLBACK_SYNC_WRITES=false; make sure
    // anyway, by the library's own rule (a character device such as /dev/null has nothing to
    // synchronise).
    hipfile::api::sync_data(df)
        .map_err(|e| CliError(format!("error writing {}: {}", quote(dst), lib_text(&e))))?;
    Ok((off, start.elapsed().as_secs_f64()))
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
