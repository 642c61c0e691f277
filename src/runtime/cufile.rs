//! NVIDIA's cuFile (`libcufile.so.0`) as the GPU-direct fastpath on NVIDIA.
//!
//! cuFile is used only when it reports a real GPUDirect Storage path (the nvidia-fs driver or
//! PCIe P2PDMA), never when it would run in its own compat mode: our engine is the better
//! compat mode. Files are registered with cuFile lazily, on their first fastpath request; a file
//! cuFile refuses (it fails with 5027 on machines whose udev database lacks `ID_FS_USAGE` for
//! the disk, containers among them) is declined with one logged reason, and its requests are
//! retried on our fallback through the usual `ENODEV` retry.
//!
//! Lock order: `handles` is a leaf; cuFile is called with it held only while registering.

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;

use super::symbols::sym;
use cufile_abi::{CUfileDescr_t, CUfileDrvProps_t, CUfileError_t, NVME_P2P_SUPPORTED};
use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
use parking_lot::RwLock;

use super::FastpathFault;
use crate::vocab::{Address, Direction};

/// `CUfileDrvProps_t`, with room to spare in case a newer cuFile writes more.
#[repr(C)]
#[derive(Default)]
struct PaddedProps {
    props: CUfileDrvProps_t,
    _spare: [u64; 16],
}

type ReadFn = unsafe extern "C" fn(*mut c_void, *mut c_void, usize, i64, i64) -> isize;
type WriteFn = unsafe extern "C" fn(*mut c_void, *const c_void, usize, i64, i64) -> isize;

/// cuFile's entry points.
struct CuFileApi {
    handle_register: unsafe extern "C" fn(*mut *mut c_void, *mut CUfileDescr_t) -> CUfileError_t,
    handle_deregister: unsafe extern "C" fn(*mut c_void),
    read: ReadFn,
    write: WriteFn,
}

/// Bytes hipfile's own `libcufile.so.0` (crates/cufile) carries: where it is the loaded
/// `libcufile.so.0` (preloaded, or first on the library path), it must not become the
/// engine's GPU-direct path, which would be the engine calling itself.
const HIPFILE_CUFILE_MARKER: &[u8] = b"hipfile-cufile: libcufile.so.0 served by the hipfile engine";

/// Whether the object defining `symbol` is hipfile's own cuFile library.
fn is_hipfile_cufile(symbol: *const c_void) -> bool {
    // SAFETY: Dl_info is plain data that dladdr fills for an address inside a loaded object.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::dladdr(symbol, &mut info) } == 0 || info.dli_fname.is_null() {
        return false;
    }
    // SAFETY: dladdr gives a NUL-terminated path owned by the loader.
    let path = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(path.to_bytes()));
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    bytes
        .windows(HIPFILE_CUFILE_MARKER.len())
        .any(|w| w == HIPFILE_CUFILE_MARKER)
}

/// Whether NVIDIA's cuFile could find a GPUDirect Storage path on this machine, judged from
/// what the kernel shows, without loading it: loading it and calling `cuFileDriverOpen` costs
/// a fresh process about half a second (measured on the H200: 400-510 ms of the first
/// `hipFileHandleRegister`, against 0.9 ms without it), only to learn it would run its own
/// compat mode. GDS needs the nvidia-fs driver (`/proc/driver/nvidia-fs`, `/dev/nvidia-fs*`)
/// or PCIe P2PDMA, which on x86_64 needs the NVIDIA driver's static BAR1
/// (`RMForceStaticBar1=1` among its registry settings in `/proc/driver/nvidia/params`, as
/// NVIDIA's troubleshooting guide says). `Err` (the reason) only when the params file was read
/// and shows neither path; anything we cannot read leaves the question to cuFile.
pub(crate) fn gds_possible(root: &std::path::Path) -> Result<(), String> {
    if !cfg!(target_arch = "x86_64") {
        return Ok(());
    }
    let nvfs_dev = (0..16).any(|i| root.join(format!("dev/nvidia-fs{i}")).exists());
    if nvfs_dev || root.join("proc/driver/nvidia-fs").exists() {
        return Ok(());
    }
    let Ok(params) = std::fs::read_to_string(root.join("proc/driver/nvidia/params")) else {
        return Ok(());
    };
    if params.to_ascii_lowercase().contains("rmforcestaticbar1=1") {
        return Ok(());
    }
    Err("no GPUDirect Storage path on this machine (no nvidia-fs driver, and no static BAR1 for P2PDMA in /proc/driver/nvidia/params); NVIDIA's cuFile was not loaded".into())
}

/// What registering a descriptor with cuFile gave.
#[derive(Clone, Copy, Debug)]
enum Registration {
    Handle(usize),
    Refused(c_int),
}

/// A loaded cuFile that reports a real GPUDirect Storage path.
pub(crate) struct CuFile {
    api: CuFileApi,
    handles: RwLock<HashMap<RawFd, Registration>>,
    version: (u32, u32),
}

impl CuFile {
    /// Load cuFile (`HIPFILE_CUFILE_LIBRARY` or `libcufile.so.0`), open its driver and keep it
    /// only if it reports a real GPUDirect Storage path; otherwise `Err` with the reason.
    pub(crate) fn load(path: Option<&str>) -> Result<CuFile, String> {
        let name = path.unwrap_or("libcufile.so.0");
        // SAFETY: loading NVIDIA's library runs its initialisers; that is the purpose.
        let lib = unsafe { Library::open(Some(name), RTLD_NOW | RTLD_LOCAL) }
            .map_err(|e| format!("{name} not loadable ({e})"))?;
        let open: unsafe extern "C" fn() -> CUfileError_t = sym(&lib, "cuFileDriverOpen")?;
        let props_fn: unsafe extern "C" fn(*mut PaddedProps) -> CUfileError_t =
            sym(&lib, "cuFileDriverGetProperties")?;
        let api = CuFileApi {
            handle_register: sym(&lib, "cuFileHandleRegister")?,
            handle_deregister: sym(&lib, "cuFileHandleDeregister")?,
            read: sym(&lib, "cuFileRead")?,
            write: sym(&lib, "cuFileWrite")?,
        };
        // Never dlclose: cuFile keeps threads and driver state.
        std::mem::forget(lib);
        if is_hipfile_cufile(open as *const c_void) {
            return Err("libcufile.so.0 is hipfile's own cuFile library (it runs on this engine: no GPUDirect Storage behind it)".into());
        }
        // SAFETY: no arguments.
        let e = unsafe { open() };
        if e.err != 0 {
            return Err(format!(
                "cuFileDriverOpen failed with {} (CUDA error {})",
                e.err, e.cu_err
            ));
        }
        let mut props = PaddedProps::default();
        // SAFETY: a valid, oversized out-structure.
        let e = unsafe { props_fn(&mut props) };
        if e.err != 0 {
            return Err(format!("cuFileDriverGetProperties failed with {}", e.err));
        }
        let nvfs = props.props.nvfs;
        if nvfs.major_version == 0 && nvfs.dstatusflags & NVME_P2P_SUPPORTED == 0 {
            return Err("cuFile reports no GPUDirect Storage path (no nvidia-fs driver, no P2PDMA): it would only run its own compat mode".into());
        }
        Ok(CuFile {
            api,
            handles: RwLock::new(HashMap::new()),
            version: (nvfs.major_version, nvfs.minor_version),
        })
    }

    /// The nvidia-fs version cuFile reports.
    pub(crate) fn version(&self) -> (u32, u32) {
        self.version
    }

    /// The cuFile handle of `fd`, registering it on first use; `Err(code)` if cuFile refused it.
    fn handle(&self, fd: RawFd) -> Result<*mut c_void, c_int> {
        if let Some(r) = self.handles.read().get(&fd) {
            return match *r {
                Registration::Handle(h) => Ok(h as *mut c_void),
                Registration::Refused(code) => Err(code),
            };
        }
        let mut map = self.handles.write();
        if let Some(r) = map.get(&fd) {
            return match *r {
                Registration::Handle(h) => Ok(h as *mut c_void),
                Registration::Refused(code) => Err(code),
            };
        }
        let mut descr = CUfileDescr_t::fd(fd);
        let mut h: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer and descriptor (CU_FILE_HANDLE_TYPE_OPAQUE_FD).
        let e = unsafe { (self.api.handle_register)(&mut h, &mut descr) };
        if e.err != 0 || h.is_null() {
            tracing::warn!(
                target: "hipfile",
                "cuFile cannot register descriptor {fd} (error {}): declining GPUDirect Storage for this file; hipfile serves it",
                e.err
            );
            map.insert(fd, Registration::Refused(e.err));
            return Err(e.err);
        }
        map.insert(fd, Registration::Handle(h as usize));
        Ok(h)
    }

    /// One GPU-direct transfer. A file cuFile refuses, and cuFile's own failures, come back as
    /// `ENODEV`/`EREMOTEIO` so that the request is retried on our fallback.
    pub(crate) fn io(
        &self,
        dir: Direction,
        fd: RawFd,
        dev: Address,
        size: u64,
        offset: i64,
    ) -> Result<u64, FastpathFault> {
        let h = self
            .handle(fd)
            .map_err(|_| FastpathFault::Os(libc::ENODEV))?;
        let size = usize::try_from(size).map_err(|_| FastpathFault::Os(libc::EINVAL))?;
        // SAFETY: a registered handle; cuFile validates the device range.
        let r = unsafe {
            match dir {
                Direction::Read => (self.api.read)(h, dev.get() as *mut c_void, size, offset, 0),
                Direction::Write => {
                    (self.api.write)(h, dev.get() as *const c_void, size, offset, 0)
                }
            }
        };
        match r {
            n if n >= 0 => Ok(n as u64),
            -1 => Err(FastpathFault::Os(crate::sys::errno())),
            code => {
                tracing::debug!(target: "hipfile", "cuFile I/O failed with {}; retrying on the fallback", -code);
                Err(FastpathFault::Os(libc::EREMOTEIO))
            }
        }
    }

    /// Forget `fd` (its file was deregistered; the number may be reused).
    pub(crate) fn forget(&self, fd: RawFd) {
        if let Some(Registration::Handle(h)) = self.handles.write().remove(&fd) {
            // SAFETY: a handle cuFile gave us, deregistered once.
            unsafe { (self.api.handle_deregister)(h as *mut c_void) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::gds_possible;
    use std::path::{Path, PathBuf};

    /// A fake root with `params` as `/proc/driver/nvidia/params` (none when `None`).
    fn root(name: &str, params: Option<&str>) -> PathBuf {
        let r = std::env::temp_dir().join(format!("hipfile-gds-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&r);
        // Created here (never an existing path another user may have planted a link at), then
        // filled.
        std::fs::create_dir(&r).unwrap();
        std::fs::create_dir_all(r.join("proc/driver/nvidia")).unwrap();
        std::fs::create_dir_all(r.join("dev")).unwrap();
        if let Some(p) = params {
            std::fs::write(r.join("proc/driver/nvidia/params"), p).unwrap();
        }
        r
    }

    fn verdict(r: &Path) -> Result<(), String> {
        let v = gds_possible(r);
        std::fs::remove_dir_all(r).unwrap();
        v
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn cufile_is_skipped_only_when_the_kernel_shows_no_gds_path() {
        // The H200 machine's params: no registry settings, no nvidia-fs.
        let plain = "EnableMSI: 1\nRegistryDwords: \"\"\nRegistryDwordsPerDevice: \"\"\n";
        let err = verdict(&root("plain", Some(plain))).unwrap_err();
        assert!(err.contains("no nvidia-fs driver"), "{err}");

        let bar1 = "RegistryDwords: \"RMForceStaticBar1=1;RmForceDisableIomapWC=1;\"\n";
        assert_eq!(verdict(&root("bar1", Some(bar1))), Ok(()), "P2PDMA set up");

        let r = root("nvfs-proc", Some(plain));
        std::fs::create_dir_all(r.join("proc/driver/nvidia-fs")).unwrap();
        assert_eq!(verdict(&r), Ok(()), "nvidia-fs loaded");

        let r = root("nvfs-dev", Some(plain));
        std::fs::write(r.join("dev/nvidia-fs3"), "").unwrap();
        assert_eq!(verdict(&r), Ok(()), "an nvidia-fs device node");

        assert_eq!(
            verdict(&root("unreadable", None)),
            Ok(()),
            "nothing to judge by: cuFile decides"
        );
    }
}
