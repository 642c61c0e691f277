//! Kernels: modules loaded from kernel images, and the one kernel the simulator runs,
//! `hipfile_stage` (the staging kernel of hipfile's stream-ordered I/O,
//! `src/runtime/stage/stage.c`).
//!
//! The CUDA face (`cuModuleLoadData`) accepts PTX text that declares `.entry hipfile_stage`; the
//! HIP face (`hipModuleLoadData`) accepts what an AMD runtime accepts: an AMDGPU code object (an
//! ELF shared object of machine `EM_AMDGPU`) with the kernel's descriptor `hipfile_stage.kd`,
//! built for the simulated GPU's architecture ([`crate::device::gcn_arch`], `gfx942` unless set
//! otherwise): one for another architecture is
//! `hipErrorNoBinaryForGpu`, anything else (PTX included) `hipErrorInvalidImage`. Module and
//! function handles share one table and are never reused, so a stale handle, or a handle of the
//! wrong sort, is always "invalid handle".
//!
//! # The staging kernel
//!
//! `hipfile_stage(StageMail *mail)`, where `mail` is an address the device can access (in
//! practice the device alias of mapped pinned memory, which in the simulator is the host address
//! itself):
//!
//! ```text
//! struct StageMail { u32 started, exited, finish, first; u64 ctl; u32 ring_len, grid; u64 r[4]; }
//! struct StageDesc { u64 dst; u64 src; u64 len; u32 serial; u32 last; }   // 32 bytes
//! struct StageCtl  { u32 done[32]; u32 reserved[32]; StageDesc ring[ring_len]; }
//! ```
//!
//! When the launch begins it stores `started = 1` (release), then waits until the host stores
//! `finish != 0` (it returns) or `ctl != 0` (acquire; `first`, `ring_len` and `grid` were stored
//! before it). Each block then runs from serial `first`: it waits until
//! `ring[s % ring_len].serial == s` (an acquire load; the host writes the other fields first and
//! `serial` last, with release), copies its share of the `len` bytes from `src` to `dst`, stores
//! `done[b] = s` (release) and stops after a descriptor with `last != 0`. Each block adds one to
//! `exited` as it returns.
//!
//! The launch is one work item of its stream, so the kernel holds the stream until it returns
//! and work queued after it waits, as on a GPU (with the legacy default stream's rules of
//! [`crate::stream`]). The blocks run on the stream's worker, one serial at a time, every block
//! at that serial together; a block copies exactly the share of each segment that the real
//! kernel's block copies (with `grid` blocks, which must be the launch's: another value is a
//! fault of the launch, `CUDA_ERROR_ILLEGAL_ADDRESS`, as a GPU's wrong shares would be).
//!
//! The words are polled as a GPU would poll them (briefly spinning, then yielding, then sleeping
//! between reads): the host fills them from another thread while the kernel runs.
//!
//! A segment's copy is a copy of the copy engine ([`crate::copy`]): the `copy_delay_us` and
//! `fail_copy` faults apply and the direction byte counters count it. A segment whose bytes the
//! device cannot address (pageable host memory, outside any allocation), or a `StageCtl` that
//! does not lie in one allocation the device can access, fails with
//! `CUDA_ERROR_ILLEGAL_ADDRESS`, and so does the `stage_dies` fault. A kernel that faults stops
//! there (nothing more is copied, `done` stays where it was, its blocks never count themselves
//! out) and breaks its device's context (see [`crate::device`]): every kernel still running on
//! the device stops too, and the device's streams report the error from then on. An injected
//! copy fault (`fail_copy`) is not a fault of the kernel: the stream reports the first such
//! failure (at its next synchronisation) and the kernel goes on, storing `done[b]`.
//!
//! Counters: `"stage_launches"` (launches queued), `"stage_segments"` (serials the kernel
//! consumed), `"stage_bytes"` (bytes its segment copies moved).

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use parking_lot::Mutex;

use crate::copy;
use crate::counters;
use crate::device;
use crate::errors::{SimError, SimResult};
use crate::faults::{self, Fault};
use crate::memory;
use crate::stream::Stream;

/// The name of the staging kernel.
pub const STAGE_KERNEL: &str = "hipfile_stage";
/// Most blocks of a staging launch (`done` has one word per block).
pub const STAGE_MAX_BLOCKS: u32 = 32;
/// Most threads per block (and the largest x or y dimension of a block).
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// The largest z dimension of a block.
pub const MAX_BLOCK_DIM_Z: u32 = 64;
/// Most shared memory per block, in bytes, without an opt-in.
pub const MAX_SHARED_MEMORY_PER_BLOCK: u32 = 48 * 1024;

/// Bytes of `done` and `reserved` before the ring.
const RING_OFFSET: usize = 256;
/// Bytes of one descriptor.
const DESC_SIZE: usize = 32;
/// Bytes of one mailbox.
const MAIL_SIZE: usize = 64;
/// `EM_AMDGPU`.
const EM_AMDGPU: u16 = 224;

enum Object {
    /// A loaded module and the handle of its function.
    Module { stage: usize },
    /// The staging kernel of a module loaded on `device`.
    Function { device: i32 },
}

static OBJECTS: LazyLock<Mutex<HashMap<usize, Object>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
static NEXT_HANDLE: AtomicUsize = AtomicUsize::new(1);

/// A fresh, never reused, non-NULL handle (pointer-aligned, as a driver's handles look).
fn new_handle() -> usize {
    0x5157_0000_0000 + NEXT_HANDLE.fetch_add(1, Ordering::Relaxed) * 16
}

fn is_identifier_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// Whether the PTX text declares the entry `name` (`.entry name(` and the like; a longer
/// identifier that merely starts with `name` does not count).
fn declares_entry(ptx: &[u8], name: &str) -> bool {
    const ENTRY: &[u8] = b".entry";
    let mut rest = ptx;
    while let Some(at) = rest.windows(ENTRY.len()).position(|w| w == ENTRY) {
        rest = &rest[at + ENTRY.len()..];
        let gap = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
        if gap == 0 {
            continue;
        }
        let after = &rest[gap..];
        if after.starts_with(name.as_bytes())
            && !after
                .get(name.len())
                .copied()
                .is_some_and(is_identifier_byte)
        {
            return true;
        }
    }
    false
}

/// Whether `image` is an AMDGPU code object with the staging kernel built for `device`'s
/// architecture: `Err(INVALID_IMAGE)` when it is not such an object, `Ok(false)` when built for
/// another GPU.
fn amdgpu_object_for(image: &[u8], device: i32) -> SimResult<bool> {
    let machine = image.get(18..20).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let has = |what: &[u8]| image.windows(what.len()).any(|w| w == what);
    if !image.starts_with(b"\x7fELF") || machine != Some(EM_AMDGPU) || !has(b"hipfile_stage.kd") {
        return Err(SimError::INVALID_IMAGE);
    }
    // The metadata names the target as `amdgcn-amd-amdhsa--gfxNNN`, optionally with features
    // (an object built for any setting of them runs on either).
    let target = format!(
        "amdgcn-amd-amdhsa--{}",
        crate::device::gcn_target(device).processor
    );
    let at = image
        .windows(target.len())
        .position(|w| w == target.as_bytes());
    Ok(at.is_some_and(|i| {
        image
            .get(i + target.len())
            .is_none_or(|b| !b.is_ascii_alphanumeric())
    }))
}

/// `cuModuleLoadData` on `device`: the PTX text `ptx`; returns the module handle.
pub fn load_module(ptx: &[u8], device: i32) -> SimResult<usize> {
    if faults::get(Fault::NoKernels) != 0 {
        return Err(SimError::NOT_SUPPORTED);
    }
    if !declares_entry(ptx, STAGE_KERNEL) {
        return Err(SimError::INVALID_IMAGE);
    }
    Ok(new_module(device))
}

/// `hipModuleLoadData` on `device`: an AMDGPU code object (see the module comment).
pub fn load_amdgpu_module(image: &[u8], device: i32) -> SimResult<usize> {
    if faults::get(Fault::NoKernels) != 0 {
        return Err(SimError::NOT_SUPPORTED);
    }
    if !amdgpu_object_for(image, device)? {
        return Err(SimError::NO_BINARY_FOR_GPU);
    }
    Ok(new_module(device))
}

fn new_module(device: i32) -> usize {
    let (module, stage) = (new_handle(), new_handle());
    let mut objects = OBJECTS.lock();
    objects.insert(module, Object::Module { stage });
    objects.insert(stage, Object::Function { device });
    module
}

/// `cuModuleUnload`: forgets the module and its function (a launch already queued runs on).
pub fn unload_module(module: usize) -> SimResult<()> {
    let mut objects = OBJECTS.lock();
    match objects.get(&module) {
        Some(&Object::Module { stage }) => {
            objects.remove(&module);
            objects.remove(&stage);
            Ok(())
        }
        _ => Err(SimError::INVALID_HANDLE),
    }
}

/// `cuModuleGetFunction`: the module's function called `name`.
pub fn get_function(module: usize, name: &[u8]) -> SimResult<usize> {
    match OBJECTS.lock().get(&module) {
        Some(&Object::Module { stage }) if name == STAGE_KERNEL.as_bytes() => Ok(stage),
        Some(Object::Module { .. }) => Err(SimError::NOT_FOUND),
        _ => Err(SimError::INVALID_HANDLE),
    }
}

/// Checks that `function` is a live function of a module loaded on `device` (the device of
/// the current context): a function of another context's module is not valid here.
pub fn check_function(function: usize, device: i32) -> SimResult<()> {
    match OBJECTS.lock().get(&function) {
        Some(&Object::Function { device: d }) if d == device => Ok(()),
        _ => Err(SimError::INVALID_HANDLE),
    }
}

/// A validated launch of the staging kernel.
#[derive(Clone, Copy, Debug)]
pub struct StageLaunch {
    /// CPU address of the `StageMail` (the bytes behind the device address given).
    mail: usize,
    blocks: u32,
}

/// Validates a launch of the staging kernel: grid `grid` and block `block` dimensions,
/// `shared` bytes of dynamic shared memory and the kernel's parameters `params` (`params[0]`
/// points to the `StageMail`'s device address). Everything that is wrong is "invalid value",
/// including a mailbox that is not 8-byte aligned or does not lie inside one allocation the
/// device can access (a GPU would fault when the kernel runs; the simulator refuses it at the
/// launch, as it refuses a bad operand of an async copy when the copy is queued).
///
/// # Safety
/// `params` must be NULL or point to one pointer, NULL or pointing to a `u64`, valid for the
/// call.
pub unsafe fn plan_stage(
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    params: *const *const c_void,
) -> SimResult<StageLaunch> {
    let threads = block.iter().map(|&d| u64::from(d)).product::<u64>();
    if !(1..=STAGE_MAX_BLOCKS).contains(&grid[0])
        || grid[1] != 1
        || grid[2] != 1
        || !(1..=u64::from(MAX_THREADS_PER_BLOCK)).contains(&threads)
        || block[2] > MAX_BLOCK_DIM_Z
        || shared > MAX_SHARED_MEMORY_PER_BLOCK
        || params.is_null()
    {
        return Err(SimError::INVALID_VALUE);
    }
    // SAFETY: the caller's contract: `params` holds one pointer.
    let p_mail = unsafe { *params };
    if p_mail.is_null() {
        return Err(SimError::INVALID_VALUE);
    }
    // SAFETY: the caller's contract: it points to the parameter's value; C does not promise the
    // alignment of an argument buffer, hence the unaligned read.
    let mail = unsafe { p_mail.cast::<u64>().read_unaligned() };
    let mail = usize::try_from(mail).map_err(|_| SimError::INVALID_VALUE)?;
    if mail == 0 || mail % 8 != 0 {
        return Err(SimError::INVALID_VALUE);
    }
    let mail = memory::device_operand(mail, MAIL_SIZE)?;
    Ok(StageLaunch {
        mail,
        blocks: grid[0],
    })
}

/// Queues a validated launch on `stream` (`hip_cooperative`: a cooperative launch of the HIP
/// face, which ROCm also orders on the device's cooperative queue).
pub fn enqueue_stage(stream: &Arc<Stream>, launch: StageLaunch, hip_cooperative: bool) {
    counters::bump("stage_launches");
    let device = stream.device();
    let work = Box::new(move || launch.run(device));
    if hip_cooperative {
        stream.enqueue_cooperative(work);
    } else {
        stream.enqueue(work);
    }
}

/// One descriptor as the kernel reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Desc {
    dst: u64,
    src: u64,
    len: u64,
    last: bool,
}

/// Polls `ready` as a GPU would: briefly spinning, then yielding, then sleeping; stops with
/// [`Stopped::Faulted`] once `device`'s context broke.
fn poll(device: i32, mut ready: impl FnMut() -> bool) -> Result<(), Stopped> {
    let mut polls = 0u32;
    while !ready() {
        if device::usable(device).is_err() {
            return Err(Stopped::Faulted);
        }
        polls = polls.saturating_add(1);
        if polls < 64 {
            std::hint::spin_loop();
        } else if polls < 96 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(30));
        }
    }
    Ok(())
}

impl StageLaunch {
    fn mail_word32(&self, offset: usize) -> &AtomicU32 {
        // SAFETY: `plan_stage` checked that the 64-byte mailbox lies in one tracked allocation
        // and is 8-byte aligned; `offset` is one of its 4-byte fields. The allocation stays
        // mapped while the kernel runs (freeing pinned or device memory waits for the device's
        // streams; freeing it otherwise is the application's bug, as on a GPU). The host reads
        // and writes these words from other threads, hence the atomic view.
        unsafe { AtomicU32::from_ptr((self.mail + offset) as *mut u32) }
    }

    fn mail_ctl(&self) -> &AtomicU64 {
        // SAFETY: as in `mail_word32`, for the 8-byte field at offset 16.
        unsafe { AtomicU64::from_ptr((self.mail + 16) as *mut u64) }
    }

    /// The kernel, on `device`: announces itself, waits for a stage or for `finish`, runs the
    /// stage's segments until the last, then counts its blocks out.
    fn run(self, device: i32) -> SimResult<()> {
        self.mail_word32(0).store(1, Ordering::Release);
        let mut ctl = 0;
        let r = poll(device, || {
            ctl = self.mail_ctl().load(Ordering::Acquire);
            ctl != 0 || self.mail_word32(8).load(Ordering::Acquire) != 0
        })
        .and_then(|()| {
            if ctl == 0 {
                Ok(())
            } else {
                self.run_stage(ctl, device)
            }
        });
        // A context that broke meanwhile stops this kernel too, before it counts itself out.
        let r = r.and_then(|()| device::usable(device).map_err(|_| Stopped::Faulted));
        let returned = match r {
            // The kernel faulted, or another on its device did: it stops where it is and
            // never returns.
            Err(Stopped::Faulted) => {
                device::break_context(device, SimError::ILLEGAL_ADDRESS);
                return device::usable(device);
            }
            Err(Stopped::Failed(e)) => Err(e),
            Ok(()) => Ok(()),
        };
        self.mail_word32(4)
            .fetch_add(self.blocks, Ordering::Release);
        returned
    }

    fn run_stage(&self, ctl: u64, device: i32) -> Result<(), Stopped> {
        let first = self.mail_word32(12).load(Ordering::Relaxed);
        let ring_len = self.mail_word32(24).load(Ordering::Relaxed);
        let grid = self.mail_word32(28).load(Ordering::Relaxed);
        let illegal = Stopped::Faulted;
        if grid != self.blocks {
            return Err(illegal);
        }
        let size = (ring_len as usize)
            .checked_mul(DESC_SIZE)
            .and_then(|r| r.checked_add(RING_OFFSET))
            .filter(|_| ring_len > 0 && ctl % 8 == 0)
            .ok_or(illegal)?;
        let ctl = usize::try_from(ctl).map_err(|_| illegal)?;
        let ctl = memory::device_operand(ctl, size).map_err(|_| illegal)?;
        Stage { ctl, ring_len }.run(first, self.blocks, device)
    }
}

/// How a launch over a stage ended badly.
#[derive(Clone, Copy, Debug)]
enum Stopped {
    /// It ran to its last segment; this was the first injected copy fault on the way.
    Failed(SimError),
    /// The kernel faulted (or the `stage_dies` fault), or another kernel on its device did: it
    /// stops where it is, and its device's context is broken.
    Faulted,
}

/// The stage a launch serves: its control block (CPU address) and ring length.
struct Stage {
    ctl: usize,
    ring_len: u32,
}

impl Stage {
    fn done(&self, block: u32) -> &AtomicU32 {
        // SAFETY: `run_stage` checked that the StageCtl, ring included, lies in one tracked
        // allocation and is 8-byte aligned; `block` < 32. Mapped while the kernel runs, as the
        // mailbox.
        unsafe { AtomicU32::from_ptr((self.ctl + 4 * block as usize) as *mut u32) }
    }

    fn desc_word64(&self, slot: usize, offset: usize) -> &AtomicU64 {
        // SAFETY: as in `done`: `slot` < ring_len, and the 8-byte fields of a descriptor are
        // 8-byte aligned (the StageCtl is, and 256 and 32 are multiples of 8).
        unsafe {
            AtomicU64::from_ptr((self.ctl + RING_OFFSET + slot * DESC_SIZE + offset) as *mut u64)
        }
    }

    fn desc_word32(&self, slot: usize, offset: usize) -> &AtomicU32 {
        // SAFETY: as in `desc_word64`, for the 4-byte fields.
        unsafe {
            AtomicU32::from_ptr((self.ctl + RING_OFFSET + slot * DESC_SIZE + offset) as *mut u32)
        }
    }

    /// Waits until the descriptor of `serial` is posted and reads it: its other fields are
    /// read only after the acquire load that saw its serial.
    fn wait_for(&self, serial: u32, device: i32) -> Result<Desc, Stopped> {
        let slot = (serial % self.ring_len) as usize;
        let word = self.desc_word32(slot, 24);
        poll(device, || word.load(Ordering::Acquire) == serial)?;
        Ok(Desc {
            dst: self.desc_word64(slot, 0).load(Ordering::Relaxed),
            src: self.desc_word64(slot, 8).load(Ordering::Relaxed),
            len: self.desc_word64(slot, 16).load(Ordering::Relaxed),
            last: self.desc_word32(slot, 28).load(Ordering::Relaxed) != 0,
        })
    }

    /// The blocks, from serial `first` until the last segment.
    fn run(&self, first: u32, blocks: u32, device: i32) -> Result<(), Stopped> {
        let mut first_error = None;
        let dies_after = faults::get(Fault::StageDies);
        let mut segments = 0i64;
        let active = vec![true; blocks as usize];
        let mut serial = first;
        loop {
            // Every kernel of a broken context stops, also one whose segments are posted.
            if device::usable(device).is_err() {
                return Err(Stopped::Faulted);
            }
            if dies_after > 0 {
                segments += 1;
                if segments >= dies_after {
                    return Err(Stopped::Faulted);
                }
            }
            let desc = self.wait_for(serial, device)?;
            if let Err(e) = copy_segment(desc, &active)? {
                first_error.get_or_insert(e);
            }
            for b in 0..blocks {
                self.done(b).store(serial, Ordering::Release);
            }
            counters::bump("stage_segments");
            if desc.last {
                break;
            }
            serial = serial.wrapping_add(1);
        }
        first_error.map_or(Ok(()), |e| Err(Stopped::Failed(e)))
    }
}

/// The byte ranges, relative to the segment's start, that block `b` of `g` copies of a segment
/// (as the real kernel splits it): when `dst` and `src` are congruent modulo 16, the head bytes
/// up to `dst`'s 16-byte boundary are split among the blocks, then the 16-byte units in
/// contiguous slices, and the last block copies the tail bytes; otherwise every block copies
/// its slice of the bytes.
fn block_share(b: u32, g: u32, dst: u64, src: u64, len: u64) -> Vec<(u64, u64)> {
    let (b, g) = (u64::from(b), u64::from(g));
    let head = if (dst ^ src) & 15 == 0 {
        ((16 - (dst & 15)) & 15).min(len)
    } else {
        len
    };
    let slice = |n: u64| {
        let per = n.div_ceil(g);
        let lo = b.saturating_mul(per).min(n);
        (lo, lo.saturating_add(per).min(n))
    };
    let mut ranges = Vec::with_capacity(3);
    let (lo, hi) = slice(head);
    if lo < hi {
        ranges.push((lo, hi));
    }
    if head == len {
        return ranges;
    }
    let body = (len - head) / 16;
    let (lo, hi) = slice(body);
    if lo < hi {
        ranges.push((head + lo * 16, head + hi * 16));
    }
    let tail = head + body * 16;
    if b == g - 1 && tail < len {
        ranges.push((tail, len));
    }
    ranges
}

/// The ranges of a segment that the blocks marked in `active` copy, merged.
fn segment_ranges(desc: Desc, active: &[bool]) -> Vec<(u64, u64)> {
    if desc.len == 0 {
        return Vec::new();
    }
    if active.iter().all(|&a| a) {
        return vec![(0, desc.len)];
    }
    let g = active.len() as u32;
    let mut ranges: Vec<(u64, u64)> = (0..g)
        .filter(|&b| active[b as usize])
        .flat_map(|b| block_share(b, g, desc.dst, desc.src, desc.len))
        .collect();
    ranges.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (lo, hi) in ranges {
        match merged.last_mut() {
            Some(m) if m.1 >= lo => m.1 = m.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    merged
}

/// Copies what the active blocks copy of one segment: `Err` when the kernel faults (bytes the
/// device cannot address), `Ok(Err)` for an injected copy fault (the rest of the segment is not
/// copied; the kernel goes on).
fn copy_segment(desc: Desc, active: &[bool]) -> Result<SimResult<()>, Stopped> {
    for (lo, hi) in segment_ranges(desc, active) {
        let at = |base: u64| {
            base.checked_add(lo)
                .and_then(|a| usize::try_from(a).ok())
                .ok_or(Stopped::Faulted)
        };
        let len = usize::try_from(hi - lo).map_err(|_| Stopped::Faulted)?;
        let op =
            copy::plan_kernel(at(desc.dst)?, at(desc.src)?, len).map_err(|_| Stopped::Faulted)?;
        if let Err(e) = copy::execute(&op) {
            return Ok(Err(e));
        }
        counters::add("stage_bytes", hi - lo);
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_found_by_its_whole_name() {
        let real = include_bytes!("../../../src/runtime/stage/stage.ptx");
        assert!(declares_entry(real, STAGE_KERNEL));
        assert!(declares_entry(
            b".visible .entry hipfile_stage(",
            STAGE_KERNEL
        ));
        assert!(declares_entry(b".entry\n\thipfile_stage ", STAGE_KERNEL));
        assert!(declares_entry(b".entry hipfile_stage", STAGE_KERNEL));
        assert!(!declares_entry(b".entry hipfile_stage_v2(", STAGE_KERNEL));
        assert!(!declares_entry(b".entryhipfile_stage(", STAGE_KERNEL));
        assert!(!declares_entry(b".func hipfile_stage(", STAGE_KERNEL));
        assert!(!declares_entry(b"// hipfile_stage", STAGE_KERNEL));
        assert!(declares_entry(
            b".entry other( ) {}\n.entry hipfile_stage(",
            STAGE_KERNEL
        ));
    }

    #[test]
    fn block_shares_split_a_congruent_segment_like_the_kernel() {
        // dst ends in 0x3, so 13 head bytes; then (1000 - 13) / 16 = 61 units; 11 tail bytes.
        let (dst, src, len) = (0x1003, 0x7003, 1000);
        assert_eq!(
            block_share(0, 2, dst, src, len),
            vec![(0, 7), (13, 13 + 31 * 16)]
        );
        assert_eq!(
            block_share(1, 2, dst, src, len),
            vec![(7, 13), (13 + 31 * 16, 13 + 61 * 16), (989, 1000)]
        );
        // Incongruent: bytes only, one slice per block.
        assert_eq!(block_share(0, 3, 0x1000, 0x2001, 10), vec![(0, 4)]);
        assert_eq!(block_share(1, 3, 0x1000, 0x2001, 10), vec![(4, 8)]);
        assert_eq!(block_share(2, 3, 0x1000, 0x2001, 10), vec![(8, 10)]);
        // More blocks than head bytes and units: block 2 copies nothing, the last block
        // only the tail.
        assert_eq!(block_share(0, 4, 0x100E, 0x200E, 40), vec![(0, 1), (2, 18)]);
        assert_eq!(
            block_share(1, 4, 0x100E, 0x200E, 40),
            vec![(1, 2), (18, 34)]
        );
        assert_eq!(block_share(2, 4, 0x100E, 0x200E, 40), vec![]);
        assert_eq!(block_share(3, 4, 0x100E, 0x200E, 40), vec![(34, 40)]);
    }

    #[test]
    fn the_shares_of_all_blocks_cover_each_byte_once() {
        for g in [1u32, 2, 3, 4, 7, 32] {
            for (dst, src, len) in [
                (0x1000u64, 0x9000u64, 4096u64),
                (0x1001, 0x9001, 4097),
                (0x1001, 0x9002, 333),
                (0x100F, 0x900F, 1),
                (0x1000, 0x9000, 15),
            ] {
                let mut seen = vec![0u8; len as usize];
                for b in 0..g {
                    for (lo, hi) in block_share(b, g, dst, src, len) {
                        seen[lo as usize..hi as usize]
                            .iter_mut()
                            .for_each(|c| *c += 1);
                    }
                }
                assert_eq!(
                    seen,
                    vec![1u8; len as usize],
                    "g={g} dst={dst:#x} len={len}"
                );
            }
        }
    }

    #[test]
    fn the_active_blocks_ranges_are_merged() {
        let desc = Desc {
            dst: 0x1000,
            src: 0x2000,
            len: 64,
            last: false,
        };
        assert_eq!(segment_ranges(desc, &[true, true]), vec![(0, 64)]);
        assert_eq!(segment_ranges(desc, &[false, true]), vec![(32, 64)]);
        let long = Desc { len: 72, ..desc };
        assert_eq!(
            segment_ranges(long, &[true, false, true]),
            vec![(0, 32), (64, 72)]
        );
        assert_eq!(segment_ranges(Desc { len: 0, ..desc }, &[true]), vec![]);
    }
}
