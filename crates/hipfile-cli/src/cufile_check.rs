//! The cuFile lines of `hipfile check` (NVIDIA only): whether NVIDIA's cuFile would work on
//! this machine, and which `libcufile.so.0` this process has loaded: NVIDIA's, or hipfile's
//! own (crates/cufile), which serves cuFile consumers (torch, KvikIO, DALI, ...) on this
//! engine.
//!
//! NVIDIA's cuFile moves data GPU-direct only through its nvidia-fs kernel driver
//! (`/proc/driver/nvidia-fs`); without it, it runs its own compat mode, whose file registration
//! needs the udev database's record of the disk: where `/run/udev` is missing (most containers
//! and many cloud VMs) it refuses every file (`cuFileHandleRegister`: 5027).

use std::path::Path;

use crate::json::Value;
use crate::output::outln;

/// What the bytes of hipfile's own `libcufile.so.0` say about it (see crates/cufile).
const HIPFILE_CUFILE_MARKER: &[u8] = b"hipfile-cufile: libcufile.so.0 served by the hipfile engine";

/// The `libcufile.so.0` in this process.
pub(crate) struct Loaded {
    pub path: String,
    pub ours: bool,
}

/// What `hipfile check` reports about cuFile.
pub(crate) struct CufileReport {
    /// `/proc/driver/nvidia-fs/version`'s first line, when the driver is there.
    pub nvidia_fs: Option<String>,
    /// `/run/udev` is a directory.
    pub udev: bool,
    pub loaded: Option<Loaded>,
}

impl CufileReport {
    pub(crate) fn examine() -> CufileReport {
        let nvfs = Path::new("/proc/driver/nvidia-fs");
        let nvidia_fs = nvfs.exists().then(|| {
            std::fs::read_to_string(nvfs.join("version"))
                .ok()
                .and_then(|t| t.lines().next().map(|l| l.trim().to_string()))
                .unwrap_or_else(|| "present".to_string())
        });
        CufileReport {
            nvidia_fs,
            udev: Path::new("/run/udev").is_dir(),
            loaded: loaded(),
        }
    }

    /// Whether NVIDIA's cuFile could register files here.
    pub(crate) fn nvidia_works(&self) -> bool {
        self.nvidia_fs.is_some() || self.udev
    }

    /// One line on NVIDIA's cuFile.
    pub(crate) fn nvidia_verdict(&self) -> String {
        match (&self.nvidia_fs, self.udev) {
            (Some(v), _) => format!("would work: GPUDirect Storage through nvidia-fs ({v})"),
            (None, false) => "refuses files: no nvidia-fs (/proc/driver/nvidia-fs) and no udev \
                              database (/run/udev), so cuFileHandleRegister fails with 5027"
                .to_string(),
            (None, true) => "compat mode only (no nvidia-fs): its own POSIX path, and file \
                             registration needs the disk's udev record (ID_FS_USAGE)"
                .to_string(),
        }
    }

    /// One line on the loaded library.
    pub(crate) fn loaded_line(&self) -> String {
        match &self.loaded {
            Some(l) if l.ours => format!(
                "{} (hipfile's own: cuFile calls run on this engine)",
                l.path
            ),
            Some(l) => format!(
                "{} (NVIDIA's; LD_PRELOAD=<libdir>/libcufile.so.0 selects hipfile's)",
                l.path
            ),
            None => "none in this process (LD_PRELOAD=<libdir>/libcufile.so.0 makes cuFile \
                     consumers use hipfile's)"
                .to_string(),
        }
    }

    pub(crate) fn print(&self) {
        outln!("cuFile (libcufile.so.0)");
        outln!("  NVIDIA's cuFile:   {}", self.nvidia_verdict());
        outln!("  loaded:            {}", self.loaded_line());
    }

    pub(crate) fn json(&self) -> Value {
        Value::obj()
            .with("nvidia_fs", self.nvidia_fs.clone())
            .with("udev", self.udev)
            .with("nvidia_cufile_works", self.nvidia_works())
            .with("nvidia_cufile", self.nvidia_verdict())
            .with(
                "loaded",
                self.loaded.as_ref().map(|l| {
                    Value::obj()
                        .with("path", l.path.clone())
                        .with("hipfile", l.ours)
                }),
            )
    }
}

/// The `libcufile.so.0` already in the process (the engine looked for NVIDIA's by that name
/// when it chose the CUDA runtime, so a loadable one is loaded by now).
fn loaded() -> Option<Loaded> {
    // SAFETY: a NUL-terminated name; RTLD_NOLOAD only returns an object already loaded.
    let h = unsafe {
        libc::dlopen(
            c"libcufile.so.0".as_ptr(),
            libc::RTLD_LAZY | libc::RTLD_NOLOAD,
        )
    };
    if h.is_null() {
        return None;
    }
    // SAFETY: a valid handle and a NUL-terminated name.
    let sym = unsafe { libc::dlsym(h, c"cuFileDriverOpen".as_ptr()) };
    if sym.is_null() {
        return None;
    }
    let path = crate::util::loaded_from(sym.cast_const())?;
    let ours = std::fs::read(&path)
        .map(|b| {
            b.windows(HIPFILE_CUFILE_MARKER.len())
                .any(|w| w == HIPFILE_CUFILE_MARKER)
        })
        .unwrap_or(false);
    Some(Loaded {
        path: path.display().to_string(),
        ours,
    })
}
