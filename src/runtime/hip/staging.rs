//! HIP's mapped pinned memory and the staging kernel of stream-ordered I/O: the embedded AMD
//! code objects (or the PTX, for HIP on NVIDIA), loaded per device on first use and launched
//! on the application's streams.

use std::ffi::c_void;

use super::sys::{HIP_HOST_MALLOC_MAPPED, HIP_HOST_MALLOC_PORTABLE};
use super::{check, HipRuntime};
use crate::runtime::{stage, MappedHost, RtError, RtResult, Runtime, Staging, StreamHandle};
use crate::vocab::Address;

/// Blocks of one staging launch on HIP: one, in a plain launch. The kernel's blocks must run
/// together (the host waits for every block at each segment), which a cooperative launch
/// guarantees; but ROCm runs every cooperative launch of a device on one queue, in launch
/// order, behind its stream's earlier work (ROCclr's `VirtualGPU::submitKernel`): a kernel
/// waiting on a held stream would hold every other stream's operations behind it, and an
/// application that holds one stream while it waits for another would wait forever. One block
/// is all-or-nothing without that guarantee. (On CUDA, where cooperative launches run on their
/// stream, four blocks copied at 49 GB/s on the H200 and one at 35.)
const STAGE_GRID: u32 = 1;

impl HipRuntime {
    /// Load the staging kernel on `device`: the embedded AMD code objects in turn (the runtime
    /// refuses those of another architecture), then the PTX for HIP on NVIDIA GPUs.
    fn load_stage(&self, device: i32) -> RtResult<usize> {
        let (Some(load), Some(get)) = (self.api.module_load_data, self.api.module_get_function)
        else {
            return Err(RtError::NOT_SUPPORTED);
        };
        let restore = self.enter_device(device)?;
        let images = stage::AMDGPU
            .iter()
            .map(|&(_, image)| image)
            .chain([stage::PTX]);
        let mut refused = RtError::NOT_SUPPORTED;
        let mut found = None;
        for image in images {
            let mut module: *mut c_void = std::ptr::null_mut();
            // SAFETY: valid out-pointer; the image is a whole code object (or NUL-terminated
            // PTX text) that lives for the program's life.
            match check(unsafe { load(&mut module, image.as_ptr().cast()) }) {
                Ok(()) => {
                    let mut f: *mut c_void = std::ptr::null_mut();
                    // SAFETY: valid out-pointer, a module just loaded, a NUL-terminated name.
                    found = Some(
                        check(unsafe { get(&mut f, module, stage::NAME.as_ptr()) })
                            .map(|()| f as usize),
                    );
                    break;
                }
                Err(e) => refused = e,
            }
        }
        self.leave_device(restore);
        let loaded = found.unwrap_or(Err(refused));
        if let Err(e) = &loaded {
            tracing::warn!(target: "hipfile", "the staging kernel of stream-ordered I/O cannot be loaded on HIP device {device} (last answer: {e}; the library carries code objects for {}): stream-ordered operations on it run when they are submitted, after their stream's earlier work", stage::AMDGPU.iter().map(|(g, _)| *g).collect::<Vec<_>>().join(", "));
        }
        loaded
    }
}

impl Staging for HipRuntime {
    fn mapped_alloc(&self, len: usize) -> RtResult<MappedHost> {
        let alias = self
            .api
            .host_get_device_pointer
            .ok_or(RtError::NOT_SUPPORTED)?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer. Pinned memory from hipHostMalloc is coherent
        // (fine-grained) by default: the kernel sees the host's stores and the host the kernel's.
        check(unsafe {
            (self.api.host_malloc)(
                &mut p,
                len.max(1),
                HIP_HOST_MALLOC_PORTABLE | HIP_HOST_MALLOC_MAPPED,
            )
        })?;
        let Some(host) = std::ptr::NonNull::new(p.cast::<u8>()) else {
            return Err(RtError::OUT_OF_MEMORY);
        };
        let mut dev: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer; `p` is mapped pinned memory just allocated.
        if let Err(e) = check(unsafe { alias(&mut dev, p, 0) }) {
            // SAFETY: allocated above, not shared.
            unsafe { (self.api.host_free)(p) };
            return Err(e);
        }
        Ok(MappedHost {
            host,
            device: Address::of(dev),
        })
    }

    fn mapped_free(&self, m: MappedHost) {
        // SAFETY: the memory came from this runtime's pinned allocation (mapped_alloc).
        unsafe { self.host_free(m.host.as_ptr()) }
    }

    fn stage_grid(&self, device: i32) -> RtResult<u32> {
        let at = usize::try_from(device).map_err(|_| RtError::INVALID_DEVICE)?;
        let slot = self.stage.get(at).ok_or(RtError::INVALID_DEVICE)?;
        (*slot.get_or_init(|| self.load_stage(device)))?;
        Ok(STAGE_GRID)
    }

    fn stage_launch(
        &self,
        device: i32,
        stream: StreamHandle,
        mail: Address,
        grid: u32,
    ) -> RtResult<()> {
        let at = usize::try_from(device).map_err(|_| RtError::INVALID_DEVICE)?;
        let f = self
            .stage
            .get(at)
            .and_then(|s| s.get())
            .copied()
            .ok_or(RtError::NOT_SUPPORTED)?? as *mut c_void;
        if grid != STAGE_GRID {
            return Err(RtError::INVALID_VALUE);
        }
        let restore = self.enter_device(device)?;
        let mut mail_arg = mail.get() as u64;
        let mut params = [(&mut mail_arg as *mut u64).cast::<c_void>()];
        let s = stream.0 as *mut c_void;
        let block = stage::THREADS;
        let r = match self.api.module_launch_kernel {
            // SAFETY: the kernel takes (StageMail *); `params` points at it for the duration of
            // the call, which copies it; the runtime validates the stream. One block.
            Some(launch) => check(unsafe {
                launch(
                    f,
                    STAGE_GRID,
                    1,
                    1,
                    block,
                    1,
                    1,
                    0,
                    s,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            }),
            None => Err(RtError::NOT_SUPPORTED),
        };
        self.leave_device(restore);
        r
    }
}
