//! The copy engine: validating and translating memcpy/memset operands, and executing them with
//! the `copy_delay_us` and `fail_copy` faults applied and the byte counters updated.
//!
//! Validation ([`plan`]) happens when a copy is issued, so bad pointers are reported by the
//! issuing call even for async copies; execution ([`execute`]) happens on the calling thread for
//! synchronous copies and on the stream worker for async ones. A zero-length copy is a no-op
//! that is not counted against `fail_copy_after`. A kernel's copies ([`plan_kernel`]) are
//! validated when the kernel makes them, as a GPU faults only on the access itself.

use std::time::Duration;

use crate::counters;
use crate::errors::{SimError, SimResult};
use crate::faults::{self, Fault};
use crate::memory;

/// `hipMemcpyKind` values.
pub mod kind {
    /// `hipMemcpyHostToHost`.
    pub const HOST_TO_HOST: i32 = 0;
    /// `hipMemcpyHostToDevice`.
    pub const HOST_TO_DEVICE: i32 = 1;
    /// `hipMemcpyDeviceToHost`.
    pub const DEVICE_TO_HOST: i32 = 2;
    /// `hipMemcpyDeviceToDevice`.
    pub const DEVICE_TO_DEVICE: i32 = 3;
    /// `hipMemcpyDefault`: direction inferred from the addresses (unified addressing).
    pub const DEFAULT: i32 = 4;
}

/// Direction of a resolved copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Host to host.
    HostToHost,
    /// Host to device.
    HostToDevice,
    /// Device to host.
    DeviceToHost,
    /// Device to device.
    DeviceToDevice,
}

impl Direction {
    fn of(src_device: bool, dst_device: bool) -> Self {
        match (src_device, dst_device) {
            (false, false) => Direction::HostToHost,
            (false, true) => Direction::HostToDevice,
            (true, false) => Direction::DeviceToHost,
            (true, true) => Direction::DeviceToDevice,
        }
    }

    fn counter(self) -> &'static str {
        match self {
            Direction::HostToHost => "h2h_bytes",
            Direction::HostToDevice => "h2d_bytes",
            Direction::DeviceToHost => "d2h_bytes",
            Direction::DeviceToDevice => "d2d_bytes",
        }
    }
}

/// A validated copy: CPU addresses where the bytes really are.
#[derive(Clone, Copy, Debug)]
pub struct CopyOp {
    dst: usize,
    src: usize,
    len: usize,
    dir: Direction,
}

fn operand(addr: usize, len: usize, device: bool) -> SimResult<usize> {
    if device {
        memory::device_operand(addr, len)
    } else {
        memory::host_operand(addr, len)
    }
}

/// Validates a copy of `len` bytes from `src` to `dst` with a `hipMemcpyKind`.
pub fn plan(dst: usize, src: usize, len: usize, memcpy_kind: i32) -> SimResult<CopyOp> {
    let (dst_dev, src_dev) = match memcpy_kind {
        kind::HOST_TO_HOST => (false, false),
        kind::HOST_TO_DEVICE => (true, false),
        kind::DEVICE_TO_HOST => (false, true),
        kind::DEVICE_TO_DEVICE => (true, true),
        kind::DEFAULT => (memory::in_device_space(dst), memory::in_device_space(src)),
        _ => return Err(SimError::INVALID_MEMCPY_DIRECTION),
    };
    let dir = Direction::of(src_dev, dst_dev);
    if len == 0 {
        return Ok(CopyOp {
            dst: 0,
            src: 0,
            len: 0,
            dir,
        });
    }
    let dst = operand(dst, len, dst_dev)?;
    let src = operand(src, len, src_dev)?;
    Ok(CopyOp { dst, src, len, dir })
}

/// Validates a copy a kernel makes of `len` bytes from `src` to `dst`: both are addresses the
/// device can access (device memory, or pinned, registered or managed host memory, whose device
/// alias is the same address). Anything else is `CUDA_ERROR_ILLEGAL_ADDRESS`, the fault a
/// kernel's access to such an address raises.
pub fn plan_kernel(dst: usize, src: usize, len: usize) -> SimResult<CopyOp> {
    let dir = Direction::of(memory::in_device_space(src), memory::in_device_space(dst));
    if len == 0 {
        return Ok(CopyOp {
            dst: 0,
            src: 0,
            len: 0,
            dir,
        });
    }
    let resolve = |addr| memory::device_operand(addr, len).map_err(|_| SimError::ILLEGAL_ADDRESS);
    Ok(CopyOp {
        dst: resolve(dst)?,
        src: resolve(src)?,
        len,
        dir,
    })
}

/// Sleeps for the `copy_delay_us` fault, counted in the `copies_running` gauge meanwhile (the
/// delay is where a copy spends its time; an undelayed copy is neither counted nor made dearer,
/// so the cost T9 compares against stays the same).
fn delay() {
    let us = faults::get(Fault::CopyDelayUs);
    if us > 0 {
        counters::gauge_add(counters::Gauge::CopiesRunning, 1);
        std::thread::sleep(Duration::from_micros(us as u64));
        counters::gauge_sub(counters::Gauge::CopiesRunning, 1);
    }
}

/// Executes a validated copy.
pub fn execute(op: &CopyOp) -> SimResult<()> {
    if op.len == 0 {
        return Ok(());
    }
    delay();
    if let Some(e) = faults::copy_fault() {
        counters::bump("copy_faults_injected");
        return Err(e);
    }
    // SAFETY: both ranges were validated by `plan` as tracked simulator memory or application
    // host memory of at least `len` bytes; `copy` allows overlap. Freeing the memory while the
    // copy runs is the application's bug, as on a real GPU.
    unsafe { std::ptr::copy(op.src as *const u8, op.dst as *mut u8, op.len) };
    counters::add(op.dir.counter(), op.len as u64);
    counters::bump("copies");
    Ok(())
}

/// A validated memset of device memory.
#[derive(Clone, Copy, Debug)]
pub struct MemsetOp {
    dst: usize,
    len: usize,
    value: u8,
}

/// Validates a memset of `len` bytes of device memory at `dst`.
pub fn plan_memset(dst: usize, value: u8, len: usize) -> SimResult<MemsetOp> {
    if len == 0 {
        return Ok(MemsetOp {
            dst: 0,
            len: 0,
            value,
        });
    }
    Ok(MemsetOp {
        dst: memory::device_operand(dst, len)?,
        len,
        value,
    })
}

/// Executes a validated memset.
pub fn execute_memset(op: &MemsetOp) {
    if op.len == 0 {
        return;
    }
    // SAFETY: validated by `plan_memset` as `len` bytes of tracked memory.
    unsafe { std::ptr::write_bytes(op.dst as *mut u8, op.value, op.len) };
    counters::add("memset_bytes", op.len as u64);
}
