//! The CUDA driver API's mapped pinned memory and the staging kernel of stream-ordered I/O
//! (the embedded PTX, compiled by the driver at the first load on a device).

use std::ffi::{c_int, c_void};

use super::errors::check;
use super::sys::{
    CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, CU_MEMHOSTALLOC_DEVICEMAP, CU_MEMHOSTALLOC_PORTABLE,
    CU_MEMHOSTREGISTER_DEVICEMAP,
};
use super::CudaRuntime;
use crate::runtime::{stage, MappedHost, RtError, RtResult, Runtime, Staging, StreamHandle};
use crate::vocab::Address;

/// Blocks of one staging launch where they can be launched co-resident: four copy at 49 GB/s
/// on the H200 (one at 35; more gain nothing: scripts/gpu/stage_probe.c).
const STAGE_GRID: u32 = 4;

impl CudaRuntime {
    /// Load the staging kernel into `device`'s primary context: its function handle and how many
    /// blocks a launch uses (several only with cooperative launches, which keep them co-resident:
    /// each block waits for the host, so one that never got a multiprocessor would stall the rest).
    fn load_stage(&self, device: i32) -> RtResult<(usize, u32)> {
        let (Some(load), Some(get), Some(_)) = (
            self.api.module_load_data,
            self.api.module_get_function,
            self.api.launch_kernel,
        ) else {
            return Err(RtError::NOT_SUPPORTED);
        };
        let restore = self.enter_device(device)?;
        let loaded = (|| {
            let mut module: *mut c_void = std::ptr::null_mut();
            // SAFETY: valid out-pointer; the image is NUL-terminated PTX text.
            check(unsafe { load(&mut module, stage::PTX.as_ptr().cast()) })?;
            let mut f: *mut c_void = std::ptr::null_mut();
            // SAFETY: valid out-pointer, a module just loaded, a NUL-terminated name.
            check(unsafe { get(&mut f, module, stage::NAME.as_ptr()) })?;
            let mut coop: c_int = 0;
            let mut dev: c_int = 0;
            // SAFETY: valid out-pointers.
            let cooperative = check(unsafe { (self.api.device_get)(&mut dev, device) }).is_ok()
                && self.api.launch_cooperative_kernel.is_some()
                && self.api.device_get_attribute.is_some_and(|attr| {
                    // SAFETY: valid out-pointer.
                    unsafe { attr(&mut coop, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev) == 0 }
                })
                && coop != 0;
            Ok((f as usize, if cooperative { STAGE_GRID } else { 1 }))
        })();
        self.leave_device(restore);
        if let Err(e) = &loaded {
            tracing::info!(target: "hipfile", "the staging kernel of stream-ordered I/O cannot be loaded on device {device} ({e}): stream-ordered operations on it run when they are submitted, after their stream's earlier work");
        }
        loaded
    }
}

impl Staging for CudaRuntime {
    fn mapped_alloc(&self, len: usize) -> RtResult<MappedHost> {
        let alias = self
            .api
            .mem_host_get_device_pointer
            .ok_or(RtError::NOT_SUPPORTED)?;
        let _g = self.ctx()?;
        // Huge pages: the staging kernel reads these slots over PCIe, and with 4 KiB pages its
        // reads of eight streams' slots ran at 24-27 GB/s against 32-33 (H200, T6 8 streams x 1,
        // two rounds interleaved in one run).
        if let Some(p) = self.register_huge(len, CU_MEMHOSTREGISTER_DEVICEMAP) {
            let mut dev: u64 = 0;
            // SAFETY: valid out-pointer; `p` is registered with the device mapping just now.
            match check(unsafe { alias(&mut dev, p.as_ptr().cast(), 0) }) {
                Ok(()) => {
                    return Ok(MappedHost {
                        host: p,
                        device: Address::new(dev as usize),
                    })
                }
                // SAFETY: registered above, not shared.
                Err(_) => unsafe { self.host_free(p.as_ptr()) },
            }
        }
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe {
            (self.api.mem_host_alloc)(
                &mut p,
                len.max(1),
                CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP,
            )
        })?;
        let Some(host) = std::ptr::NonNull::new(p.cast::<u8>()) else {
            return Err(RtError::OUT_OF_MEMORY);
        };
        let mut dev: u64 = 0;
        // SAFETY: valid out-pointer; `p` is mapped pinned memory just allocated.
        if let Err(e) = check(unsafe { alias(&mut dev, p, 0) }) {
            // SAFETY: allocated above, not shared.
            unsafe { (self.api.mem_free_host)(p) };
            return Err(e);
        }
        Ok(MappedHost {
            host,
            device: Address::new(dev as usize),
        })
    }

    fn mapped_free(&self, m: MappedHost) {
        // SAFETY: the memory came from this runtime's pinned allocation (mapped_alloc).
        unsafe { self.host_free(m.host.as_ptr()) }
    }

    fn stage_grid(&self, device: i32) -> RtResult<u32> {
        let slot = self
            .stage
            .get(usize::try_from(device).map_err(|_| RtError::INVALID_DEVICE)?)
            .ok_or(RtError::INVALID_DEVICE)?;
        slot.get_or_init(|| self.load_stage(device)).map(|(_, g)| g)
    }

    fn stage_launch(
        &self,
        device: i32,
        stream: StreamHandle,
        mail: Address,
        grid: u32,
    ) -> RtResult<()> {
        let (f, max) = self
            .stage
            .get(usize::try_from(device).map_err(|_| RtError::INVALID_DEVICE)?)
            .and_then(|s| s.get())
            .copied()
            .ok_or(RtError::NOT_SUPPORTED)??;
        let grid = grid.clamp(1, max);
        let restore = self.enter_device(device)?;
        let mut mail_arg = mail.get() as u64;
        let mut params = [(&mut mail_arg as *mut u64).cast::<c_void>()];
        let f = f as *mut c_void;
        let s = stream.0 as *mut c_void;
        let block = stage::THREADS;
        let r = match (grid, self.api.launch_cooperative_kernel) {
            (g, Some(coop)) if g > 1 => {
                // SAFETY: the kernel takes (StageMail *); `params` points at it for the duration
                // of the call, which copies it; the driver validates the stream.
                check(unsafe { coop(f, g, 1, 1, block, 1, 1, 0, s, params.as_mut_ptr()) })
            }
            _ => match self.api.launch_kernel {
                // SAFETY: as above, one block.
                Some(launch) => check(unsafe {
                    launch(
                        f,
                        1,
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
            },
        };
        self.leave_device(restore);
        r
    }
}
