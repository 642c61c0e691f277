//! What this library asks the CUDA driver itself (memory and I/O are the engine's): how many
//! GPUs there are, the size of each one's BAR1 aperture, and the default stream's completion.
//!
//! Both come from the CUDA driver already in the process (the application's, or the one the
//! engine loaded): its symbols are looked up in the global scope, else in an already loaded
//! `libcuda.so.1`; this library never loads a CUDA driver of its own. BAR1 is the device's
//! second memory BAR, found in `/sys/bus/pci/devices/<bus id>/resource` from the bus id
//! `cuDeviceGetPCIBusId` gives: the size NVIDIA's library reports (`nvidia-smi`'s "BAR1 Memory
//! Usage: Total").

use std::ffi::{c_char, c_int, c_void, CStr};

use cufile_abi::{code, CUfileError_t};

/// `CUDA_ERROR_NOT_INITIALIZED`: the `cu_err` of calls that need CUDA where there is none.
const CUDA_ERROR_NOT_INITIALIZED: c_int = 3;

/// A CUDA driver entry point, if a CUDA driver is in the process.
fn cuda_symbol(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: a NUL-terminated name; RTLD_DEFAULT finds symbols of the global scope.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if !f.is_null() {
        return Some(f);
    }
    // SAFETY: as above; RTLD_NOLOAD only returns an object already loaded.
    let h = unsafe { libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if h.is_null() {
        return None;
    }
    // SAFETY: a valid handle and a NUL-terminated name.
    let f = unsafe { libc::dlsym(h, name.as_ptr()) };
    // SAFETY: the reference RTLD_NOLOAD took; the object stays loaded by its first loader.
    unsafe { libc::dlclose(h) };
    (!f.is_null()).then_some(f)
}

/// The status of a call that needs CUDA where there is none (or it does not initialise).
fn no_cuda(cu_err: c_int) -> CUfileError_t {
    CUfileError_t {
        err: code::CUDA_DRIVER_ERROR,
        cu_err,
    }
}

/// `cuStreamSynchronize(NULL)`: the default stream has run everything queued on it. `Ok` also
/// when no CUDA driver can be found in the global scope (then nothing could have been queued
/// by this process's application on a driver we know of).
pub(crate) fn synchronize_default_stream() -> Result<(), CUfileError_t> {
    let Some(sync) = cuda_symbol(c"cuStreamSynchronize") else {
        return Ok(());
    };
    // SAFETY: cuStreamSynchronize(CUstream) -> CUresult.
    let sync: unsafe extern "C" fn(*mut c_void) -> c_int = unsafe { std::mem::transmute(sync) };
    // SAFETY: the NULL stream is always valid.
    match unsafe { sync(std::ptr::null_mut()) } {
        0 => Ok(()),
        r => Err(no_cuda(r)),
    }
}

/// `cuDeviceGetCount`, initialising the driver first if the application has not (as NVIDIA's
/// library initialises CUDA itself).
pub(crate) fn device_count() -> Result<c_int, CUfileError_t> {
    let count = cuda_symbol(c"cuDeviceGetCount").ok_or(no_cuda(CUDA_ERROR_NOT_INITIALIZED))?;
    // SAFETY: cuDeviceGetCount(int *) -> CUresult.
    let count: unsafe extern "C" fn(*mut c_int) -> c_int = unsafe { std::mem::transmute(count) };
    let mut n = 0;
    // SAFETY: a valid out-pointer.
    let mut r = unsafe { count(&mut n) };
    if r == CUDA_ERROR_NOT_INITIALIZED {
        if let Some(init) = cuda_symbol(c"cuInit") {
            // SAFETY: cuInit(unsigned) -> CUresult; initialising twice is harmless.
            let init: unsafe extern "C" fn(u32) -> c_int = unsafe { std::mem::transmute(init) };
            // SAFETY: flags must be 0.
            if unsafe { init(0) } == 0 {
                // SAFETY: a valid out-pointer.
                r = unsafe { count(&mut n) };
            }
        }
    }
    if r != 0 {
        return Err(no_cuda(r));
    }
    Ok(n)
}

/// The PCI bus id of device `ordinal` (`cuDeviceGet`, `cuDeviceGetPCIBusId`), in sysfs's
/// spelling (`0000:3b:00.0`); `None` when the driver cannot say.
pub(crate) fn pci_bus_id(ordinal: c_int) -> Option<String> {
    let get = cuda_symbol(c"cuDeviceGet")?;
    let bus = cuda_symbol(c"cuDeviceGetPCIBusId")?;
    // SAFETY: the CUDA driver's prototypes.
    let get: unsafe extern "C" fn(*mut c_int, c_int) -> c_int = unsafe { std::mem::transmute(get) };
    // SAFETY: as above.
    let bus: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int =
        unsafe { std::mem::transmute(bus) };
    let mut dev = 0;
    // SAFETY: a valid out-pointer.
    if unsafe { get(&mut dev, ordinal) } != 0 {
        return None;
    }
    let mut text = [0 as c_char; 64];
    // SAFETY: `text` is writable for its length, which is passed.
    if unsafe { bus(text.as_mut_ptr(), text.len() as c_int, dev) } != 0 {
        return None;
    }
    text[text.len() - 1] = 0;
    // SAFETY: NUL-terminated (the last byte at least).
    let id = unsafe { CStr::from_ptr(text.as_ptr()) }.to_str().ok()?;
    sysfs_bus_id(id)
}

/// A bus id as the kernel names its directory: `[domain:]bus:device.function` in hexadecimal,
/// any case and domain width (CUDA and NVML spell them differently) -> `dddd:bb:dd.f`.
fn sysfs_bus_id(id: &str) -> Option<String> {
    let id = id.trim();
    let (rest, function) = id.rsplit_once('.')?;
    let parts: Vec<&str> = rest.split(':').collect();
    let (domain, bus, device) = match parts[..] {
        [d, b, s] => (d, b, s),
        [b, s] => ("0", b, s),
        _ => return None,
    };
    let hex = |s: &str| u32::from_str_radix(s, 16).ok();
    Some(format!(
        "{:04x}:{:02x}:{:02x}.{:x}",
        hex(domain)?,
        hex(bus)?,
        hex(device)?,
        hex(function)?
    ))
}

/// `IORESOURCE_MEM` in the flags column of a sysfs `resource` line.
const IORESOURCE_MEM: u64 = 0x200;

/// The size in KiB of BAR1 in the text of a sysfs `resource` file: one line per resource,
/// `start end flags` in hexadecimal, the six BARs first (the expansion ROM and bridge windows
/// follow). BAR1 is the second BAR that is memory and not empty: a 64-bit BAR takes two
/// registers, and the kernel lists it on the first of its lines and leaves the second (its
/// upper half) empty, so with a 32-bit BAR0 (bare-metal GPUs) BAR1 is on line 2 and with a
/// 64-bit BAR0 (some virtual machines) on line 3. `Some(0)` when there is no second memory BAR
/// (unassigned), `None` for text that is not a resource file.
fn bar1_kib_from_resource(text: &str) -> Option<u64> {
    let mut memory = Vec::new();
    for line in text.lines().take(6) {
        let words: Vec<u64> = line
            .split_whitespace()
            .map(|w| u64::from_str_radix(w.trim_start_matches("0x"), 16).ok())
            .collect::<Option<_>>()?;
        let [start, end, flags] = words[..] else {
            return None;
        };
        if flags & IORESOURCE_MEM != 0 && end > start {
            memory.push((end - start + 1) / 1024);
        }
    }
    Some(memory.get(1).copied().unwrap_or(0))
}

/// BAR1 of the device with this PCI bus id, in KiB, or why it cannot be read.
pub(crate) fn bar1_kib(bus_id: &str) -> Result<u64, String> {
    let path = format!("/sys/bus/pci/devices/{bus_id}/resource");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    bar1_kib_from_resource(&text).ok_or_else(|| format!("{path}: not a resource file"))
}

/// BAR1 of GPU `ordinal` in KiB: `Err` for an index the CUDA driver does not have (or without
/// a CUDA driver), `Ok(None)` when its size cannot be read (no PCI bus id from the driver, no
/// sysfs in a container, a device that is not on PCI; the reason is logged once per call).
pub(crate) fn bar1_kib_of(ordinal: c_int) -> Result<Option<u64>, CUfileError_t> {
    let n = device_count()?;
    if ordinal < 0 || ordinal >= n {
        return Err(CUfileError_t::op(code::INVALID_VALUE));
    }
    let kib = pci_bus_id(ordinal)
        .ok_or_else(|| "the CUDA driver gives no PCI bus id".to_string())
        .and_then(|id| bar1_kib(&id));
    Ok(match kib {
        Ok(kib) => Some(kib),
        Err(why) => {
            crate::log::warn(&format!("BAR1 size of GPU {ordinal} unknown: {why}"));
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_ids_of_cuda_and_nvml_are_the_kernel_s() {
        assert_eq!(
            sysfs_bus_id("0000:3B:00.0").as_deref(),
            Some("0000:3b:00.0")
        );
        assert_eq!(
            sysfs_bus_id("00000000:65:00.0").as_deref(),
            Some("0000:65:00.0")
        );
        assert_eq!(
            sysfs_bus_id("0001:c1:1f.7").as_deref(),
            Some("0001:c1:1f.7")
        );
        assert_eq!(sysfs_bus_id("65:00.0").as_deref(), Some("0000:65:00.0"));
        assert_eq!(sysfs_bus_id("65:00"), None);
        assert_eq!(sysfs_bus_id("xx:00.0"), None);
    }

    /// Three columns per line, as the kernel writes them (`0x%016llx`).
    fn resource(lines: &[(u64, u64, u64)]) -> String {
        lines
            .iter()
            .map(|(s, e, f)| format!("0x{s:016x} 0x{e:016x} 0x{f:016x}\n"))
            .collect()
    }

    const EMPTY: (u64, u64, u64) = (0, 0, 0);

    #[test]
    fn bar1_after_a_32_bit_bar0_is_on_the_second_line() {
        // A bare-metal H100: BAR0 32-bit 16 MiB, BAR1 64-bit prefetchable 128 GiB (its upper
        // half empty), BAR3 64-bit 32 MiB, an I/O BAR, then the expansion ROM.
        let text = resource(&[
            (0xd400_0000, 0xd4ff_ffff, 0x40200),
            (0x2320_0000_0000, 0x233f_ffff_ffff, 0x14220c),
            EMPTY,
            (0x2340_0000_0000, 0x2340_01ff_ffff, 0x14220c),
            EMPTY,
            (0x3000, 0x307f, 0x40101),
            (0xd500_0000, 0xd507_ffff, 0x46200),
        ]);
        assert_eq!(bar1_kib_from_resource(&text), Some(128 << 20));
    }

    #[test]
    fn bar1_after_a_64_bit_bar0_is_on_the_third_line() {
        // The H200 virtual machine's device 0000:00:06.0: BAR0 64-bit 16 MiB (line 2 is its
        // empty upper half), BAR1 64-bit 256 GiB on line 3, BAR3 32 MiB on line 5.
        let text = resource(&[
            (0x3800_0000_0000, 0x3800_00ff_ffff, 0x14220c),
            EMPTY,
            (0x3000_0000_0000, 0x303f_ffff_ffff, 0x14220c),
            EMPTY,
            (0x3800_0200_0000, 0x3800_03ff_ffff, 0x14220c),
            EMPTY,
            EMPTY,
        ]);
        assert_eq!(bar1_kib_from_resource(&text), Some(256 << 20));
    }

    #[test]
    fn io_bars_the_rom_and_unassigned_bars_are_not_bar1() {
        // An I/O BAR between the two memory BARs is skipped.
        let text = resource(&[
            (0xd400_0000, 0xd4ff_ffff, 0x40200),
            (0x3000, 0x307f, 0x40101),
            (0xc000_0000, 0xcfff_ffff, 0x4120c),
        ]);
        assert_eq!(bar1_kib_from_resource(&text), Some(256 << 10));
        // Only BAR0 assigned: the expansion ROM (line 7, a memory resource too) is not BAR1.
        let text = resource(&[
            (0x40_0000_0000, 0x40_0007_ffff, 0x140204),
            EMPTY,
            EMPTY,
            EMPTY,
            EMPTY,
            EMPTY,
            (0xd500_0000, 0xd507_ffff, 0x46200),
        ]);
        assert_eq!(bar1_kib_from_resource(&text), Some(0));
        assert_eq!(bar1_kib_from_resource(""), Some(0));
        assert_eq!(bar1_kib_from_resource("0x1 0x2\n"), None, "two columns");
        assert_eq!(bar1_kib_from_resource("0x0 0x0 0x0\nzz 0x0 0x0\n"), None);
    }
}
