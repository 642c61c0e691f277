//! A device's architecture: `hipGetDevicePropertiesR0600` reports it in `gcnArchName` (with
//! the compute capability that follows from it), and tests set it with `HIPSIM_GCN_ARCH` or
//! `hipsimSetGcnArch`. The properties are read here as the bytes at the offsets of ROCm 6's
//! `hipDeviceProp_t`, not through the simulator's own struct.

mod common;

use std::ffi::c_void;
use std::ptr;

use common::*;

/// `sizeof(hipDeviceProp_tR0600)`.
const PROPS: usize = 1472;

/// The properties of `device` as raw bytes, or the error.
fn props(s: &Sim, device: i32) -> Result<Vec<u8>, i32> {
    // 8-byte aligned, as the struct is; filled with a marker, so that bytes past it show.
    let mut words = vec![0xA5A5_A5A5_A5A5_A5A5u64; PROPS / 8 + 2];
    // SAFETY: PROPS bytes to write into, 8-byte aligned.
    let rc =
        unsafe { (s.hipGetDevicePropertiesR0600)(words.as_mut_ptr().cast::<c_void>(), device) };
    let mut buf: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    assert_eq!(&buf[PROPS..], &[0xA5u8; 16], "wrote past the struct");
    buf.truncate(PROPS);
    match rc {
        0 => Ok(buf),
        rc => Err(rc),
    }
}

fn int_at(p: &[u8], offset: usize) -> i32 {
    i32::from_ne_bytes(p[offset..offset + 4].try_into().unwrap())
}

fn text_at(p: &[u8], offset: usize) -> String {
    let field = &p[offset..offset + 256];
    let end = field.iter().position(|&b| b == 0).expect("NUL-terminated");
    assert!(field[end..].iter().all(|&b| b == 0), "zero after the NUL");
    String::from_utf8(field[..end].to_vec()).unwrap()
}

/// `gcnArchName`.
fn arch(p: &[u8]) -> String {
    text_at(p, 1160)
}

fn set_arch(s: &Sim, device: i32, name: Option<&str>) -> i32 {
    let c = name.map(cstr);
    // SAFETY: NULL or a valid C string.
    unsafe { (s.hipsimSetGcnArch)(device, c.as_ref().map_or(ptr::null(), |c| c.as_ptr())) }
}

#[test]
fn the_properties_report_the_device_s_architecture() {
    let (s, _g) = sim();
    set_fault(s, "device_count", 2);
    assert_eq!(set_arch(s, -1, None), 0);
    let p = props(s, 0).unwrap();
    assert_eq!(arch(&p), "gfx942:sramecc+:xnack-");
    assert_eq!(text_at(&p, 0), "hipsim simulated GPU 0");
    assert_eq!((int_at(&p, 360), int_at(&p, 364)), (9, 4), "major, minor");
    assert_eq!(int_at(&p, 308), 64, "warpSize");
    assert_eq!(int_at(&p, 388), 304, "multiProcessorCount");

    // One device changes; the other keeps the default.
    assert_eq!(set_arch(s, 1, Some("gfx90a:sramecc-:xnack+")), 0);
    let p1 = props(s, 1).unwrap();
    assert_eq!(arch(&p1), "gfx90a:sramecc-:xnack+");
    assert_eq!((int_at(&p1, 360), int_at(&p1, 364)), (9, 0));
    assert_eq!(text_at(&p1, 0), "hipsim simulated GPU 1");
    assert_eq!(arch(&props(s, 0).unwrap()), "gfx942:sramecc+:xnack-");
    // Every device at once; NULL gives the default back.
    assert_eq!(set_arch(s, -1, Some("gfx1100")), 0);
    let p = props(s, 0).unwrap();
    assert_eq!(arch(&p), "gfx1100");
    assert_eq!((int_at(&p, 360), int_at(&p, 364)), (11, 0));
    assert_eq!(set_arch(s, -1, None), 0);
    assert_eq!(arch(&props(s, 1).unwrap()), "gfx942:sramecc+:xnack-");

    // Refused: names that are not an AMD target, ordinals outside the table; nothing changes.
    for bad in ["", "sm_90", "gfx942:xnack", "gfx942:tgsplit+", "GFX942"] {
        assert_eq!(set_arch(s, 0, Some(bad)), -1, "{bad:?}");
    }
    assert_eq!(
        set_arch(s, 0, Some(&format!("gfx9{}", "0".repeat(252)))),
        -1
    );
    assert_eq!(set_arch(s, 16, Some("gfx90a")), -1);
    assert_eq!(set_arch(s, -2, Some("gfx90a")), -1);
    assert_eq!(arch(&props(s, 0).unwrap()), "gfx942:sramecc+:xnack-");

    // Errors: a NULL pointer, a device that does not exist.
    // SAFETY: the simulator refuses NULL before writing.
    assert_eq!(
        unsafe { (s.hipGetDevicePropertiesR0600)(ptr::null_mut(), 0) },
        1
    );
    assert_eq!(props(s, 2), Err(101));
    assert_eq!(props(s, -1), Err(101));
    set_fault(s, "device_count", 1);
}

#[test]
fn the_entry_point_is_found_by_name_and_the_legacy_one_is_absent() {
    let (s, _g) = sim();
    let mut p = ptr::null_mut();
    let mut status = -1;
    // SAFETY: a valid name and out-pointers.
    let rc = unsafe {
        (s.hipGetProcAddress)(
            cstr("hipGetDevicePropertiesR0600").as_ptr(),
            &mut p,
            70_200_000,
            0,
            &mut status,
        )
    };
    assert_eq!((rc, status), (0, 0));
    assert_eq!(p, s.hipGetDevicePropertiesR0600 as *mut c_void);
    // ROCm 5's layout is smaller: a program that binds the old name must not get R0600's.
    // SAFETY: only whether the symbol exists is asked.
    let legacy = unsafe { library().get::<*mut c_void>(b"hipGetDeviceProperties\0") };
    assert!(legacy.is_err());
}

#[test]
fn the_environment_sets_every_device_s_architecture() {
    run_child(
        "environment_child",
        &[
            ("HIPSIM_GCN_ARCH", "gfx950:sramecc+:xnack-"),
            ("HIPSIM_DEVICE_COUNT", "2"),
        ],
        "environment child ok",
    );
    run_child(
        "invalid_environment_child",
        &[("HIPSIM_GCN_ARCH", "sm_90")],
        "invalid environment child ok",
    );
}

#[test]
fn environment_child() {
    if !in_child() {
        return;
    }
    let s = sim_raw();
    for d in 0..2 {
        let p = props(s, d).unwrap();
        assert_eq!(arch(&p), "gfx950:sramecc+:xnack-");
        assert_eq!((int_at(&p, 360), int_at(&p, 364)), (9, 5));
    }
    // hipsimSetGcnArch overrides it; NULL comes back to the environment's.
    assert_eq!(set_arch(s, 0, Some("gfx942")), 0);
    assert_eq!(arch(&props(s, 0).unwrap()), "gfx942");
    assert_eq!(set_arch(s, 0, None), 0);
    assert_eq!(arch(&props(s, 0).unwrap()), "gfx950:sramecc+:xnack-");
    println!("environment child ok");
}

#[test]
fn invalid_environment_child() {
    if !in_child() {
        return;
    }
    let s = sim_raw();
    assert_eq!(arch(&props(s, 0).unwrap()), "gfx942:sramecc+:xnack-");
    println!("invalid environment child ok");
}
