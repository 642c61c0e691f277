//! The driver's life (open, close, use count, implicit opens), what happens at the first open
//! (configuration file, environment, staged parameters pushed into the engine), properties,
//! the legacy `cuFileDriverSet*` calls and the parameter API.

use std::ffi::{c_char, c_int};
use std::sync::{Mutex, MutexGuard};

use crate::engine::{cu, eng, engine, Engine};
use crate::hip_abi::*;
use crate::params::{self, Home, Slabs, BOOL, SIZE, STRING_COUNT};
use crate::window::Window;
use crate::{boundary_op, config, gpu, log};
use cufile_abi::{code, CUfileDrvPropsNvfs, CUfileDrvProps_t, CUfileError_t};

/// Everything this library keeps besides the engine.
pub(crate) struct State {
    pub staged_size: [Option<u64>; 12],
    pub staged_bool: [Option<bool>; 14],
    pub staged_string: [Option<String>; STRING_COUNT],
    /// Values of our own parameters in force.
    pub own_size: [u64; 12],
    pub own_bool: [bool; 14],
    pub own_string: [String; STRING_COUNT],
    pub posix_slabs: Option<Slabs>,
    pub gpu_slabs: Option<Slabs>,
    /// P2P masks per `CUfileDriverStatusFlags_t` value.
    pub p2p: [u32; 15],
    /// `cuFileSetStatsLevel` (overrides `profile.cufile_stats`).
    pub stats_level_set: Option<u64>,
    pub stats: Window,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// The state, locked. Held across engine calls only on the open and close paths (the data
/// path never takes it).
pub(crate) fn state() -> StateGuard {
    let mut g = STATE.lock().unwrap_or_else(|p| p.into_inner());
    g.get_or_insert_with(|| State {
        staged_size: [None; 12],
        staged_bool: [None; 14],
        staged_string: Default::default(),
        own_size: SIZE.map(|r| r.default),
        own_bool: BOOL.map(|r| r.default),
        own_string: [
            "ERROR".to_string(),
            String::new(),
            String::new(),
            "DC_V1".to_string(),
        ],
        posix_slabs: None,
        gpu_slabs: None,
        p2p: [0; 15],
        stats_level_set: None,
        stats: Window::default(),
    });
    StateGuard(g)
}

pub(crate) struct StateGuard(MutexGuard<'static, Option<State>>);

impl std::ops::Deref for StateGuard {
    type Target = State;
    fn deref(&self) -> &State {
        self.0.as_ref().expect("initialised by state()")
    }
}

impl std::ops::DerefMut for StateGuard {
    fn deref_mut(&mut self) -> &mut State {
        self.0.as_mut().expect("initialised by state()")
    }
}

/// `cuFileDriverOpen`, and every implicit open: at use count 0 the configuration is read and
/// applied before the engine opens.
pub(crate) fn open() -> Result<(), CUfileError_t> {
    let e = eng()?;
    let mut st = state();
    if e.is_open() {
        return e.driver_open().map_err(cu);
    }
    first_open(e, &mut st)
}

/// Open the driver if it is closed (the implicit open of registrations, batch set-up and
/// stream calls); an implicit open counts, as cuFile's does.
pub(crate) fn ensure_open() -> Result<&'static Engine, CUfileError_t> {
    let e = eng()?;
    if e.is_open() {
        return Ok(e);
    }
    let mut st = state();
    if !e.is_open() {
        first_open(e, &mut st)?;
    }
    Ok(e)
}

fn first_open(e: &Engine, st: &mut State) -> Result<(), CUfileError_t> {
    let (json, source) = config::read();
    // A log directory staged through the API beats the file's; the environment beats both.
    let staged_dir = st.staged_string[params::STRING_LOG_DIR].clone();
    log::configure(
        json.get("logging.level").and_then(|v| v.as_text()),
        staged_dir
            .as_deref()
            .or_else(|| json.get("logging.dir").and_then(|v| v.as_text())),
    );
    if let Some(path) = source {
        log::notice(&format!("configuration read from {path}"));
    }
    // Size parameters: staged > environment > file.
    for (i, row) in SIZE.iter().enumerate() {
        let v = st.staged_size[i].or_else(|| params::size_from_config(i, &json));
        let Some(v) = v else { continue };
        let v = match row.home {
            Home::Own => v,
            Home::Engine => params::engine_size(i, v),
        };
        let in_range = row
            .range
            .is_none_or(|(lo, hi)| v >= lo && (hi == 0 || v <= hi));
        let applied = in_range
            && match row.home {
                Home::Own => {
                    st.own_size[i] = v;
                    true
                }
                Home::Engine => e.set_size(i as c_int, v as usize).is_ok(),
            };
        if !applied {
            log::warn(&format!(
                "{} = {v} is out of range: the configuration's value is used",
                row.json
            ));
        }
    }
    for (i, row) in BOOL.iter().enumerate() {
        let v = st.staged_bool[i].or_else(|| params::bool_from_config(i, &json));
        let Some(v) = v else { continue };
        match row.home {
            Home::Own => st.own_bool[i] = v,
            Home::Engine => {
                if e.set_bool(i as c_int, v).is_err() {
                    log::warn(&format!("{} = {v} not applied", row.json));
                }
            }
        }
    }
    for (i, key) in params::STRING_JSON.iter().enumerate() {
        let v = st.staged_string[i]
            .clone()
            .or_else(|| json.get(*key).and_then(|v| v.as_text()).map(str::to_owned));
        if let Some(v) = v {
            st.own_string[i] = v;
        }
    }
    if let Some(level) = st.staged_string[params::STRING_LOGGING_LEVEL].as_deref() {
        log::set_level(level);
    }
    for (slot, row) in [
        (&mut st.posix_slabs, &params::POSIX_SLABS),
        (&mut st.gpu_slabs, &params::GPU_SLABS),
    ] {
        if !slot.as_ref().is_some_and(|s| s.by_api) {
            if let Some(s) = params::slabs_from_config(row, &json) {
                *slot = Some(s);
            }
        }
    }
    // cuFileSetStatsLevel beats `profile.cufile_stats` for the level in force; the parameter
    // itself keeps the configured value (NVIDIA's reads 0 at level 3).
    let level = st.stats_level_set.unwrap_or(st.own_size[0]).min(3);
    if level > 0 {
        // The engine records what the level needs (its level is set before it opens).
        let _ = e.set_size(0, level as usize);
    }
    st.staged_size = [None; 12];
    st.staged_bool = [None; 14];
    st.staged_string = Default::default();
    e.driver_open().map_err(cu)?;
    st.stats.opened(level);
    // cuFile without a GPU-direct path and with compat mode switched off refuses to open.
    let props = e.properties().unwrap_or_default();
    let compat = props.nvfs.driver_control_flags & (1 << HIP_ALLOW_COMPAT_MODE_BIT) != 0;
    if !compat && props.nvfs.driver_status_flags == 0 {
        let _ = e.driver_close();
        log::error("allow_compat_mode is false and there is no GPU-direct path: not opening");
        return Err(CUfileError_t::op(code::DRIVER_NOT_INITIALIZED));
    }
    log::notice(
        "driver open (hipfile engine; POSIX reads and writes with GPU copies: compat mode)",
    );
    Ok(())
}

/// `cuFileDriverClose_v2` (and its legacy name): at use count 0 → 5001; the close that reaches 0
/// forgets the P2P flags and the statistics window.
pub(crate) fn close() -> Result<(), CUfileError_t> {
    let e = eng()?;
    let mut st = state();
    e.driver_close().map_err(cu)?;
    if !e.is_open() {
        st.p2p = [0; 15];
        st.stats.closed();
    }
    Ok(())
}

#[no_mangle]
pub(crate) extern "C" fn cuFileDriverOpen() -> CUfileError_t {
    boundary_op(open)
}

#[no_mangle]
pub(crate) extern "C" fn cuFileDriverClose_v2() -> CUfileError_t {
    boundary_op(close)
}

/// The legacy spelling: the same reference-counted close.
#[no_mangle]
pub(crate) extern "C" fn cuFileDriverClose() -> CUfileError_t {
    boundary_op(close)
}

#[no_mangle]
pub(crate) extern "C" fn cuFileUseCount() -> std::ffi::c_long {
    crate::boundary(|| 0, || engine().map_or(0, |e| e.use_count().max(0)))
}

/// # Safety
/// `version` is NULL or valid for a write.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileGetVersion(version: *mut c_int) -> CUfileError_t {
    boundary_op(|| {
        if version.is_null() {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        std::hint::black_box(crate::MARKER);
        // SAFETY: non-NULL, writable per the C contract.
        unsafe { version.write(crate::version::level().version()) };
        Ok(())
    })
}

/// Feature bits: dynamic routing (0) always; batch (1), streams (2) and parallel I/O (3) as
/// the engine reports them.
fn fflags(p: &HipProps) -> u32 {
    1 | (p.feature_flags & 0b1110)
}

fn kib32(v: u64) -> u32 {
    v.min(u64::from(u32::MAX)) as u32
}

/// # Safety
/// `props` is NULL or valid for a write.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileDriverGetProperties(
    props: *mut CUfileDrvProps_t,
) -> CUfileError_t {
    boundary_op(|| {
        if props.is_null() {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        let e = eng()?;
        let p = e.properties().map_err(cu)?;
        let st = state();
        // While closed, what is staged shows through (cuFile 1.17+ reports the staged
        // properties before an open); nothing is staged while open.
        let size = |i: usize, engine: u64| st.staged_size[i].unwrap_or(engine);
        let flag = |i: usize, b: u32| {
            let on = st.staged_bool[i].unwrap_or(st.own_bool[i]);
            if on {
                1u32 << b
            } else {
                0
            }
        };
        let ctl = p.nvfs.driver_control_flags;
        let poll = match st.staged_bool[0] {
            Some(on) => u32::from(on),
            None => ctl & 1,
        };
        let out = CUfileDrvProps_t {
            nvfs: CUfileDrvPropsNvfs {
                // The version of the nvidia-fs kernel driver: there is none behind us.
                major_version: 0,
                minor_version: 0,
                poll_thresh_size: size(10, p.nvfs.poll_thresh_size) as usize,
                max_direct_io_size: size(5, p.nvfs.max_direct_io_size) as usize,
                dstatusflags: p.nvfs.driver_status_flags,
                dcontrolflags: poll | (ctl & 0b10) | flag(12, 2) | flag(13, 4),
            },
            fflags: fflags(&p),
            max_device_cache_size: kib32(size(6, p.max_device_cache_size)),
            per_buffer_cache_size: kib32(size(7, st.own_size[7])),
            max_device_pinned_mem_size: kib32(size(8, p.max_device_pinned_mem_size)),
            max_batch_io_size: kib32(size(9, u64::from(p.max_batch_io_count))),
            max_batch_io_timeout_msecs: kib32(size(11, st.own_size[11])),
        };
        // SAFETY: non-NULL, writable per the C contract.
        unsafe { props.write(out) };
        Ok(())
    })
}

/// An engine refusal of a legacy setter's value is cuFile's "property range error".
fn limit(r: Result<(), HipError>) -> Result<(), CUfileError_t> {
    r.map_err(|e| match e.err {
        HIP_INVALID_VALUE => CUfileError_t::op(code::DRIVER_UNSUPPORTED_LIMIT),
        _ => cu(e),
    })
}

/// A size parameter's range as `cuFileGetParameterMinMaxValue` reports it: the table's, with
/// the GPU-dependent maxima (the device cache and pinned memory, 0 in the table) filled in
/// with GPU 0's BAR1 size in KiB, which NVIDIA's library reports for both; 0 (no upper bound)
/// where that cannot be read or there is no GPU.
fn range(i: usize) -> Option<(u64, u64)> {
    let (lo, hi) = SIZE[i].range?;
    if hi != 0 {
        return Some((lo, hi));
    }
    Some((lo, gpu::bar1_kib_of(0).ok().flatten().unwrap_or(0)))
}

/// The checks of a legacy setter's value (KiB) against its parameter's range.
fn in_range(i: usize, v: usize) -> Result<(), CUfileError_t> {
    legacy_status(i, v as u64, range(i).unwrap_or((0, 0)))
}

/// The status NVIDIA's library gives a legacy setter's value `v` (KiB) of size parameter `i`
/// whose range is `(lo, hi)` (`hi` 0: no known bound). 0 and values below the range are
/// `CU_FILE_DRIVER_UNSUPPORTED_LIMIT`. Above it, the two sizes bounded by the GPU (device
/// cache and pinned memory, at most its BAR1) answer `CU_FILE_INVALID_VALUE`, as does a size
/// whose byte count no `size_t` holds where the bound is unknown: that is no amount of GPU
/// memory; the others (direct I/O size, poll threshold) `CU_FILE_DRIVER_UNSUPPORTED_LIMIT`,
/// `SIZE_MAX` included.
fn legacy_status(i: usize, v: u64, (lo, hi): (u64, u64)) -> Result<(), CUfileError_t> {
    if v == 0 || v < lo {
        return Err(CUfileError_t::op(code::DRIVER_UNSUPPORTED_LIMIT));
    }
    let gpu_bound = SIZE[i].range.is_some_and(|(_, max)| max == 0);
    let above = hi != 0 && v > hi;
    if gpu_bound && (above || v > usize::MAX as u64 / 1024) {
        return Err(CUfileError_t::op(code::INVALID_VALUE));
    }
    if above {
        return Err(CUfileError_t::op(code::DRIVER_UNSUPPORTED_LIMIT));
    }
    Ok(())
}

/// A legacy setter of size parameter `i`: while closed the value is staged like a
/// `cuFileSetParameterSizeT` value (so it beats the configuration file at the next open, and
/// the getters and properties show it meanwhile); while open it is applied to the engine.
fn legacy(
    i: usize,
    kib: usize,
    stage: impl FnOnce(&mut State),
    apply: impl FnOnce(&Engine) -> Result<(), HipError>,
) -> Result<(), CUfileError_t> {
    in_range(i, kib)?;
    let e = eng()?;
    let mut st = state();
    if e.is_open() {
        drop(st);
        return limit(apply(e));
    }
    stage(&mut st);
    Ok(())
}

/// Legacy setters work open (applied) and closed (staged), and refuse only values outside
/// their parameter's range (and 0).
#[no_mangle]
pub(crate) extern "C" fn cuFileDriverSetPollMode(
    poll: bool,
    poll_threshold_size: usize,
) -> CUfileError_t {
    boundary_op(|| {
        legacy(
            10,
            poll_threshold_size,
            |st| {
                st.staged_bool[0] = Some(poll);
                st.staged_size[10] = Some(poll_threshold_size as u64);
            },
            |e| e.set_poll_mode(poll, poll_threshold_size),
        )
    })
}

#[no_mangle]
pub(crate) extern "C" fn cuFileDriverSetMaxDirectIOSize(
    max_direct_io_size: usize,
) -> CUfileError_t {
    boundary_op(|| {
        legacy(
            5,
            max_direct_io_size,
            |st| st.staged_size[5] = Some(max_direct_io_size as u64),
            |e| e.set_max_direct_io_size(max_direct_io_size),
        )
    })
}

#[no_mangle]
pub(crate) extern "C" fn cuFileDriverSetMaxCacheSize(max_cache_size: usize) -> CUfileError_t {
    boundary_op(|| {
        legacy(
            6,
            max_cache_size,
            |st| st.staged_size[6] = Some(max_cache_size as u64),
            |e| e.set_max_cache_size(max_cache_size),
        )
    })
}

#[no_mangle]
pub(crate) extern "C" fn cuFileDriverSetMaxPinnedMemSize(max_pinned_size: usize) -> CUfileError_t {
    boundary_op(|| {
        legacy(
            8,
            max_pinned_size,
            |st| st.staged_size[8] = Some(max_pinned_size as u64),
            |e| e.set_max_pinned_mem_size(max_pinned_size),
        )
    })
}

// ---- parameters ----------------------------------------------------------------------

fn index(param: c_int, count: usize) -> Result<usize, CUfileError_t> {
    usize::try_from(param)
        .ok()
        .filter(|&i| i < count)
        .ok_or(CUfileError_t::op(code::INVALID_VALUE))
}

/// Setters stage, and only while the driver is closed.
fn closed_for_setting(e: &Engine) -> Result<(), CUfileError_t> {
    if e.is_open() {
        Err(CUfileError_t::op(code::DRIVER_ALREADY_OPEN))
    } else {
        Ok(())
    }
}

/// # Safety
/// `value` is NULL or valid for a write.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileGetParameterSizeT(
    param: c_int,
    value: *mut usize,
) -> CUfileError_t {
    boundary_op(|| {
        let i = index(param, SIZE.len())?;
        if value.is_null() {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        let e = eng()?;
        let open = e.is_open();
        let st = state();
        let v = match (SIZE[i].home, open, st.staged_size[i]) {
            (_, false, Some(v)) => v as usize,
            // For `PROFILE_STATS` the configured level: cuFileSetStatsLevel changes the level
            // in force (cuFileGetStatsLevel), not the parameter, as in NVIDIA's library.
            (Home::Own, _, _) => st.own_size[i] as usize,
            (Home::Engine, _, _) => e.get_size(param).map_err(cu)?,
        };
        // SAFETY: non-NULL, writable per the C contract.
        unsafe { value.write(v) };
        Ok(())
    })
}

#[no_mangle]
pub(crate) extern "C" fn cuFileSetParameterSizeT(param: c_int, value: usize) -> CUfileError_t {
    boundary_op(|| {
        let i = index(param, SIZE.len())?;
        let e = eng()?;
        let mut st = state();
        closed_for_setting(e)?;
        st.staged_size[i] = Some(value as u64);
        Ok(())
    })
}

/// # Safety
/// `value` is NULL or valid for a write of a `bool`.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileGetParameterBool(
    param: c_int,
    value: *mut bool,
) -> CUfileError_t {
    boundary_op(|| {
        let i = index(param, BOOL.len())?;
        if value.is_null() {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        let e = eng()?;
        let open = e.is_open();
        let st = state();
        let v = match (BOOL[i].home, open, st.staged_bool[i]) {
            (_, false, Some(v)) => v,
            (Home::Own, _, _) => st.own_bool[i],
            (Home::Engine, _, _) => e.get_bool(param).map_err(cu)?,
        };
        // SAFETY: non-NULL, writable per the C contract.
        unsafe { value.write(v) };
        Ok(())
    })
}

#[no_mangle]
pub(crate) extern "C" fn cuFileSetParameterBool(param: c_int, value: bool) -> CUfileError_t {
    boundary_op(|| {
        let i = index(param, BOOL.len())?;
        let e = eng()?;
        let mut st = state();
        closed_for_setting(e)?;
        st.staged_bool[i] = Some(value);
        Ok(())
    })
}

/// # Safety
/// `desc_str` is NULL or valid for writes of `len` bytes.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileGetParameterString(
    param: c_int,
    desc_str: *mut c_char,
    len: c_int,
) -> CUfileError_t {
    boundary_op(|| {
        let i = index(param, STRING_COUNT)?;
        if desc_str.is_null() {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        let e = eng()?;
        let open = e.is_open();
        let st = state();
        let v = match (open, &st.staged_string[i]) {
            (false, Some(v)) => v.clone(),
            // Ignored in secure-execution mode, as when opening the log: never reported either.
            _ if i == params::STRING_ENV_LOGFILE_PATH => {
                crate::env::path_var("CUFILE_LOGFILE_PATH")
                    .ok_or(CUfileError_t::op(code::INVALID_VALUE))?
            }
            _ if i == params::STRING_LOGGING_LEVEL && open => log::level_name().to_string(),
            _ => st.own_string[i].clone(),
        };
        let Ok(len @ 1..) = usize::try_from(len) else {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        };
        // Room for the text and its NUL, or nothing is written; except the log file path,
        // which NVIDIA's library cuts to the buffer (a 1-byte buffer gets "").
        let text = if i == params::STRING_ENV_LOGFILE_PATH {
            &v.as_bytes()[..v.len().min(len - 1)]
        } else if v.len() < len {
            v.as_bytes()
        } else {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        };
        // The whole buffer is written, the text then NULs, as strncpy does (and NVIDIA's).
        // SAFETY: `len` writable bytes per the C contract; text.len() < len.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), desc_str.cast::<u8>(), text.len());
            std::ptr::write_bytes(desc_str.add(text.len()), 0, len - text.len());
        }
        Ok(())
    })
}

/// # Safety
/// `desc_str` is NULL or a NUL-terminated string.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileSetParameterString(
    param: c_int,
    desc_str: *const c_char,
) -> CUfileError_t {
    boundary_op(|| {
        let i = index(param, STRING_COUNT)?;
        let v = crate::engine::c_text(desc_str).ok_or(CUfileError_t::op(code::INVALID_VALUE))?;
        let e = eng()?;
        let mut st = state();
        closed_for_setting(e)?;
        st.staged_string[i] = Some(v);
        Ok(())
    })
}

/// # Safety
/// `min_value` and `max_value` are NULL or valid for writes.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileGetParameterMinMaxValue(
    param: c_int,
    min_value: *mut usize,
    max_value: *mut usize,
) -> CUfileError_t {
    boundary_op(|| {
        let i = index(param, SIZE.len())?;
        if min_value.is_null() || max_value.is_null() {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        let (lo, hi) = range(i).ok_or(CUfileError_t::op(code::INVALID_VALUE))?;
        // SAFETY: both non-NULL and writable per the C contract.
        unsafe {
            min_value.write(lo as usize);
            max_value.write(hi as usize);
        }
        Ok(())
    })
}

fn slab_slot(st: &mut State, gpu: bool) -> (&mut Option<Slabs>, &'static params::SlabRow) {
    if gpu {
        (&mut st.gpu_slabs, &params::GPU_SLABS)
    } else {
        (&mut st.posix_slabs, &params::POSIX_SLABS)
    }
}

/// # Safety
/// Both arrays are NULL or valid for reads of `len` values.
unsafe fn set_slabs(
    gpu: bool,
    sizes: *const usize,
    counts: *const usize,
    len: c_int,
) -> Result<(), CUfileError_t> {
    if sizes.is_null() || counts.is_null() || len <= 0 {
        return Err(CUfileError_t::op(code::INVALID_VALUE));
    }
    let e = eng()?;
    let mut st = state();
    closed_for_setting(e)?;
    // SAFETY: `len` readable values each, per the C contract.
    let (s, c) = unsafe {
        (
            std::slice::from_raw_parts(sizes, len as usize),
            std::slice::from_raw_parts(counts, len as usize),
        )
    };
    *slab_slot(&mut st, gpu).0 = Some(Slabs {
        sizes: s.iter().map(|&v| v as u64).collect(),
        counts: c.iter().map(|&v| v as u64).collect(),
        by_api: true,
    });
    Ok(())
}

/// # Safety
/// Both arrays are NULL or valid for writes of `len` values.
unsafe fn get_slabs(
    gpu: bool,
    sizes: *mut usize,
    counts: *mut usize,
    len: c_int,
) -> Result<(), CUfileError_t> {
    if sizes.is_null() || counts.is_null() || len <= 0 {
        return Err(CUfileError_t::op(code::INVALID_VALUE));
    }
    let mut st = state();
    let (slot, row) = slab_slot(&mut st, gpu);
    let (s, c): (Vec<u64>, Vec<u64>) = match slot {
        Some(v) => (v.sizes.clone(), v.counts.clone()),
        None => (row.sizes.to_vec(), row.counts.to_vec()),
    };
    if s.len() != len as usize {
        return Err(CUfileError_t::op(code::INVALID_VALUE));
    }
    for (i, (a, b)) in s.iter().zip(&c).enumerate() {
        // SAFETY: i < len, writable per the C contract.
        unsafe {
            sizes.add(i).write(*a as usize);
            counts.add(i).write(*b as usize);
        }
    }
    Ok(())
}

/// # Safety
/// As [`set_slabs`].
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileSetParameterPosixPoolSlabArray(
    size_values: *const usize,
    count_values: *const usize,
    len: c_int,
) -> CUfileError_t {
    // SAFETY: forwarded contract.
    boundary_op(|| unsafe { set_slabs(false, size_values, count_values, len) })
}

/// # Safety
/// As [`get_slabs`].
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileGetParameterPosixPoolSlabArray(
    size_values: *mut usize,
    count_values: *mut usize,
    len: c_int,
) -> CUfileError_t {
    // SAFETY: forwarded contract.
    boundary_op(|| unsafe { get_slabs(false, size_values, count_values, len) })
}

/// # Safety
/// As [`set_slabs`].
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileSetParameterGpuBounceBufferSlabArray(
    size_values: *const usize,
    count_values: *const usize,
    len: c_int,
) -> CUfileError_t {
    // SAFETY: forwarded contract.
    boundary_op(|| unsafe { set_slabs(true, size_values, count_values, len) })
}

/// # Safety
/// As [`get_slabs`].
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileGetParameterGpuBounceBufferSlabArray(
    size_values: *mut usize,
    count_values: *mut usize,
    len: c_int,
) -> CUfileError_t {
    // SAFETY: forwarded contract.
    boundary_op(|| unsafe { get_slabs(true, size_values, count_values, len) })
}

// ---- P2P, BAR, topology ----------------------------------------------------------------

/// `CU_FILE_P2P_FLAG_PCI_P2PDMA`: the only mask x86-64 accepts.
const P2P_PCI_P2PDMA: u32 = 1;

/// # Safety
/// `p2p_flags` is NULL or valid for a write.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileDriverGetP2PFlags(
    status_flag: c_int,
    p2p_flags: *mut c_int,
) -> CUfileError_t {
    boundary_op(|| {
        let i = index(status_flag, 15)?;
        if p2p_flags.is_null() {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        let v = state().p2p[i];
        // SAFETY: non-NULL, writable per the C contract.
        unsafe { p2p_flags.write(v as c_int) };
        Ok(())
    })
}

#[no_mangle]
pub(crate) extern "C" fn cuFileDriverSetP2PFlags(
    status_flag: c_int,
    p2p_flags: c_int,
) -> CUfileError_t {
    boundary_op(|| {
        let i = index(status_flag, 15)?;
        match p2p_flags as u32 {
            0 => Ok(()),
            P2P_PCI_P2PDMA => {
                state().p2p[i] = P2P_PCI_P2PDMA;
                Ok(())
            }
            _ => Err(CUfileError_t::op(code::INVALID_VALUE)),
        }
    })
}

/// BAR1 of a GPU, in KiB: the device's second memory BAR (see `gpu.rs`). A bad index is
/// `CU_FILE_INVALID_VALUE`; no CUDA driver in the process, `CU_FILE_CUDA_DRIVER_ERROR`. When
/// the size cannot be read (no PCI bus id from the driver, no sysfs in a container, a device
/// that is not on PCI) the answer is success with 0, as NVIDIA's library answers in compat
/// mode, and the reason is logged (WARN).
///
/// # Safety
/// `bar_size` is NULL or valid for a write.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileGetBARSizeInKB(
    gpu_index: c_int,
    bar_size: *mut usize,
) -> CUfileError_t {
    boundary_op(|| {
        if bar_size.is_null() {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        let kib = gpu::bar1_kib_of(gpu_index)?.unwrap_or(0);
        // SAFETY: non-NULL, writable per the C contract.
        unsafe { bar_size.write(kib as usize) };
        Ok(())
    })
}

/// # Safety
/// `filename` is NULL or a NUL-terminated path.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileExportPCIeTopology(filename: *const c_char) -> CUfileError_t {
    boundary_op(|| {
        let path = crate::engine::c_text(filename)
            .filter(|p| !p.is_empty())
            .ok_or(CUfileError_t::op(code::INVALID_VALUE))?;
        // No topology is detected behind the POSIX path: the header line and `null`.
        std::fs::write(&path, "// Topology file for cuFile.\nnull\n")
            .map_err(|_| CUfileError_t::op(code::INVALID_VALUE))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parameter's range with the GPU-dependent maximum set to `bar1` KiB, as [`range`]
    /// makes it.
    fn with_bar1(i: usize, bar1: u64) -> (u64, u64) {
        let (lo, hi) = SIZE[i].range.unwrap();
        (lo, if hi == 0 { bar1 } else { hi })
    }

    #[test]
    fn legacy_setters_answer_as_nvidia_s_did_on_the_h200() {
        // What NVIDIA's 1.15 library answered on the H200, whose BAR1 is 256 GiB.
        const BAR1: u64 = 268_435_456;
        const OK: c_int = 0;
        const LIMIT: c_int = code::DRIVER_UNSUPPORTED_LIMIT;
        const INVALID: c_int = code::INVALID_VALUE;
        let max = usize::MAX as u64;
        let cases: [(usize, u64, c_int); 13] = [
            (5, 1024, OK),
            (5, 0, LIMIT),
            (5, 1 << 40, LIMIT),
            (5, max, LIMIT),
            (6, max, INVALID),
            (6, 131_072, OK),
            (8, max, INVALID),
            (8, 16, LIMIT),
            (8, max / 1024 + 1, INVALID),
            (8, 536_870_912, INVALID),
            (8, 33_554_432, OK),
            (10, 8, OK),
            (10, max, LIMIT),
        ];
        for (i, v, want) in cases {
            let got = legacy_status(i, v, with_bar1(i, BAR1))
                .err()
                .map_or(OK, |e| e.err);
            assert_eq!(got, want, "parameter {i}, {v} KiB");
        }
    }

    #[test]
    fn without_a_known_bar1_only_sizes_no_size_t_holds_are_refused_above() {
        let max = usize::MAX as u64;
        let status = |i: usize, v: u64| legacy_status(i, v, with_bar1(i, 0)).err().map(|e| e.err);
        assert_eq!(status(8, max), Some(code::INVALID_VALUE));
        assert_eq!(status(6, max / 1024 + 1), Some(code::INVALID_VALUE));
        assert_eq!(status(6, max / 1024), None);
        assert_eq!(status(8, 536_870_912), None);
        assert_eq!(status(8, 16), Some(code::DRIVER_UNSUPPORTED_LIMIT));
    }
}
