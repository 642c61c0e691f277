//! The staging kernel's images, built from `stage.c` by `scripts/stage_kernels.sh`, and the
//! facts of its launch that the runtimes share. The host side of its protocol is
//! `engine/lend/stage.rs`.

/// Threads of every block of a launch (`STAGE_THREADS` in stage.c).
pub(crate) const THREADS: u32 = 1024;

/// Most blocks one launch may have (`STAGE_MAX_BLOCKS` in stage.c).
pub(crate) const MAX_BLOCKS: u32 = 32;

/// The kernel's name in every image.
pub(crate) const NAME: &std::ffi::CStr = c"hipfile_stage";

/// PTX for NVIDIA GPUs (CUDA, and HIP on NVIDIA), NUL-terminated as `cuModuleLoadData` wants
/// text: ISA 7.0 for sm_70, which the drivers of CUDA 11 and later compile.
pub(crate) const PTX: &[u8] = concat!(include_str!("stage.ptx"), "\0").as_bytes();

/// AMD code objects (version 5), one per GPU architecture, in the order a HIP runtime tries
/// them: a runtime refuses an object built for another architecture, so the first one it
/// loads is the device's. Keep in step with `scripts/stage_kernels.sh`.
pub(crate) const AMDGPU: &[(&str, &[u8])] = &[
    ("gfx942", include_bytes!("amdgpu/gfx942.hsaco")),
    ("gfx90a", include_bytes!("amdgpu/gfx90a.hsaco")),
    ("gfx908", include_bytes!("amdgpu/gfx908.hsaco")),
    ("gfx941", include_bytes!("amdgpu/gfx941.hsaco")),
    ("gfx940", include_bytes!("amdgpu/gfx940.hsaco")),
    ("gfx906", include_bytes!("amdgpu/gfx906.hsaco")),
    ("gfx1100", include_bytes!("amdgpu/gfx1100.hsaco")),
    ("gfx1101", include_bytes!("amdgpu/gfx1101.hsaco")),
    ("gfx1102", include_bytes!("amdgpu/gfx1102.hsaco")),
    ("gfx1030", include_bytes!("amdgpu/gfx1030.hsaco")),
    ("gfx1150", include_bytes!("amdgpu/gfx1150.hsaco")),
    ("gfx1151", include_bytes!("amdgpu/gfx1151.hsaco")),
    ("gfx1200", include_bytes!("amdgpu/gfx1200.hsaco")),
    ("gfx1201", include_bytes!("amdgpu/gfx1201.hsaco")),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_image_names_the_kernel() {
        let has = |img: &[u8], what: &[u8]| img.windows(what.len()).any(|w| w == what);
        assert!(has(PTX, b".entry hipfile_stage("));
        assert_eq!(PTX.last(), Some(&0));
        for (gpu, img) in AMDGPU {
            // An ELF shared object of EM_AMDGPU (224) with the kernel's descriptor symbol.
            assert_eq!(&img[..4], b"\x7fELF", "{gpu}");
            assert_eq!(u16::from_le_bytes([img[18], img[19]]), 224, "{gpu}");
            assert!(has(img, b"hipfile_stage.kd"), "{gpu}");
            assert!(
                has(img, format!("amdgcn-amd-amdhsa--{gpu}").as_bytes()),
                "{gpu}"
            );
        }
    }
}
