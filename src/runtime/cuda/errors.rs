//! CUDA results in HIP's numbering. HIP's own `hipCUResultTohipError` keeps the number for
//! every CUDA error that has a HIP twin (the two enums share their values) and turns every
//! other code into `hipErrorUnknown` (999); [`translate`] does the same with the table
//! [`HIP_TWINS`].

use super::sys::CuResult;
use crate::runtime::{RtError, RtResult};

/// CUDA result codes that have a HIP error of the same number (HIP's `hipCUResultTohipError`);
/// every other code becomes `hipErrorUnknown`.
pub(in crate::runtime) const HIP_TWINS: &[(i32, &str)] = &[
    (0, "CUDA_SUCCESS → hipSuccess"),
    (1, "CUDA_ERROR_INVALID_VALUE → hipErrorInvalidValue"),
    (2, "CUDA_ERROR_OUT_OF_MEMORY → hipErrorOutOfMemory"),
    (3, "CUDA_ERROR_NOT_INITIALIZED → hipErrorNotInitialized"),
    (4, "CUDA_ERROR_DEINITIALIZED → hipErrorDeinitialized"),
    (5, "CUDA_ERROR_PROFILER_DISABLED → hipErrorProfilerDisabled"),
    (
        6,
        "CUDA_ERROR_PROFILER_NOT_INITIALIZED → hipErrorProfilerNotInitialized",
    ),
    (
        7,
        "CUDA_ERROR_PROFILER_ALREADY_STARTED → hipErrorProfilerAlreadyStarted",
    ),
    (
        8,
        "CUDA_ERROR_PROFILER_ALREADY_STOPPED → hipErrorProfilerAlreadyStopped",
    ),
    (100, "CUDA_ERROR_NO_DEVICE → hipErrorNoDevice"),
    (101, "CUDA_ERROR_INVALID_DEVICE → hipErrorInvalidDevice"),
    (200, "CUDA_ERROR_INVALID_IMAGE → hipErrorInvalidImage"),
    (201, "CUDA_ERROR_INVALID_CONTEXT → hipErrorInvalidContext"),
    (
        202,
        "CUDA_ERROR_CONTEXT_ALREADY_CURRENT → hipErrorContextAlreadyCurrent",
    ),
    (205, "CUDA_ERROR_MAP_FAILED → hipErrorMapFailed"),
    (206, "CUDA_ERROR_UNMAP_FAILED → hipErrorUnmapFailed"),
    (207, "CUDA_ERROR_ARRAY_IS_MAPPED → hipErrorArrayIsMapped"),
    (208, "CUDA_ERROR_ALREADY_MAPPED → hipErrorAlreadyMapped"),
    (209, "CUDA_ERROR_NO_BINARY_FOR_GPU → hipErrorNoBinaryForGpu"),
    (210, "CUDA_ERROR_ALREADY_ACQUIRED → hipErrorAlreadyAcquired"),
    (211, "CUDA_ERROR_NOT_MAPPED → hipErrorNotMapped"),
    (
        212,
        "CUDA_ERROR_NOT_MAPPED_AS_ARRAY → hipErrorNotMappedAsArray",
    ),
    (
        213,
        "CUDA_ERROR_NOT_MAPPED_AS_POINTER → hipErrorNotMappedAsPointer",
    ),
    (
        214,
        "CUDA_ERROR_ECC_UNCORRECTABLE → hipErrorECCNotCorrectable",
    ),
    (
        215,
        "CUDA_ERROR_UNSUPPORTED_LIMIT → hipErrorUnsupportedLimit",
    ),
    (
        216,
        "CUDA_ERROR_CONTEXT_ALREADY_IN_USE → hipErrorContextAlreadyInUse",
    ),
    (
        217,
        "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED → hipErrorPeerAccessUnsupported",
    ),
    (218, "CUDA_ERROR_INVALID_PTX → hipErrorInvalidKernelFile"),
    (
        219,
        "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT → hipErrorInvalidGraphicsContext",
    ),
    (300, "CUDA_ERROR_INVALID_SOURCE → hipErrorInvalidSource"),
    (301, "CUDA_ERROR_FILE_NOT_FOUND → hipErrorFileNotFound"),
    (
        302,
        "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND → hipErrorSharedObjectSymbolNotFound",
    ),
    (
        303,
        "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED → hipErrorSharedObjectInitFailed",
    ),
    (304, "CUDA_ERROR_OPERATING_SYSTEM → hipErrorOperatingSystem"),
    (400, "CUDA_ERROR_INVALID_HANDLE → hipErrorInvalidHandle"),
    (500, "CUDA_ERROR_NOT_FOUND → hipErrorNotFound"),
    (600, "CUDA_ERROR_NOT_READY → hipErrorNotReady"),
    (700, "CUDA_ERROR_ILLEGAL_ADDRESS → hipErrorIllegalAddress"),
    (
        701,
        "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES → hipErrorLaunchOutOfResources",
    ),
    (702, "CUDA_ERROR_LAUNCH_TIMEOUT → hipErrorLaunchTimeOut"),
    (
        704,
        "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED → hipErrorPeerAccessAlreadyEnabled",
    ),
    (
        705,
        "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED → hipErrorPeerAccessNotEnabled",
    ),
    (
        708,
        "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE → hipErrorSetOnActiveProcess",
    ),
    (
        709,
        "CUDA_ERROR_CONTEXT_IS_DESTROYED → hipErrorContextIsDestroyed",
    ),
    (710, "CUDA_ERROR_ASSERT → hipErrorAssert"),
    (
        712,
        "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED → hipErrorHostMemoryAlreadyRegistered",
    ),
    (
        713,
        "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED → hipErrorHostMemoryNotRegistered",
    ),
    (719, "CUDA_ERROR_LAUNCH_FAILED → hipErrorLaunchFailure"),
    (
        720,
        "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE → hipErrorCooperativeLaunchTooLarge",
    ),
    (801, "CUDA_ERROR_NOT_SUPPORTED → hipErrorNotSupported"),
    (
        900,
        "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED → hipErrorStreamCaptureUnsupported",
    ),
    (
        901,
        "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED → hipErrorStreamCaptureInvalidated",
    ),
    (
        902,
        "CUDA_ERROR_STREAM_CAPTURE_MERGE → hipErrorStreamCaptureMerge",
    ),
    (
        903,
        "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED → hipErrorStreamCaptureUnmatched",
    ),
    (
        904,
        "CUDA_ERROR_STREAM_CAPTURE_UNJOINED → hipErrorStreamCaptureUnjoined",
    ),
    (
        905,
        "CUDA_ERROR_STREAM_CAPTURE_ISOLATION → hipErrorStreamCaptureIsolation",
    ),
    (
        906,
        "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT → hipErrorStreamCaptureImplicit",
    ),
    (907, "CUDA_ERROR_CAPTURED_EVENT → hipErrorCapturedEvent"),
    (
        908,
        "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD → hipErrorStreamCaptureWrongThread",
    ),
    (
        910,
        "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE → hipErrorGraphExecUpdateFailure",
    ),
    (999, "CUDA_ERROR_UNKNOWN → hipErrorUnknown"),
];

/// Translate a `CUresult` into HIP's numbering (see [`HIP_TWINS`]).
pub(super) fn translate(cu: CuResult) -> RtError {
    if HIP_TWINS.iter().any(|&(c, _)| c == cu) {
        RtError(cu)
    } else {
        RtError::UNKNOWN
    }
}

/// Whether `cu` leaves the context unusable: CUDA documents each of these as leaving "the
/// process in an inconsistent state", every later call of the context answering the same
/// (`ECC_UNCORRECTABLE`, `ILLEGAL_ADDRESS`, `LAUNCH_TIMEOUT`, `ASSERT`, `HARDWARE_STACK_ERROR`,
/// `ILLEGAL_INSTRUCTION`, `MISALIGNED_ADDRESS`, `INVALID_ADDRESS_SPACE`, `INVALID_PC`,
/// `LAUNCH_FAILED`). Decided on the `CUresult`: five of them have no HIP twin.
pub(super) fn breaks_context(cu: CuResult) -> bool {
    matches!(cu, 214 | 700 | 702 | 710 | 714..=719)
}

/// `Ok` for `CUDA_SUCCESS`, the translated error otherwise.
pub(super) fn check(rc: CuResult) -> RtResult<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(translate(rc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translation_keeps_twins_and_maps_the_rest_to_unknown() {
        assert_eq!(translate(0), RtError(0));
        assert_eq!(translate(1), RtError::INVALID_VALUE);
        assert_eq!(translate(2), RtError::OUT_OF_MEMORY);
        assert_eq!(translate(201), RtError::INVALID_CONTEXT);
        assert_eq!(translate(500), RtError::NOT_FOUND);
        assert_eq!(translate(712), RtError::HOST_MEMORY_ALREADY_REGISTERED);
        // CUDA_ERROR_JIT_COMPILER_NOT_FOUND (221) has no HIP twin.
        assert_eq!(translate(221), RtError::UNKNOWN);
        assert_eq!(translate(-5), RtError::UNKNOWN);
    }

    #[test]
    fn the_errors_that_break_a_context() {
        let breaking: Vec<CuResult> = (0..1000).filter(|&cu| breaks_context(cu)).collect();
        assert_eq!(breaking, [214, 700, 702, 710, 714, 715, 716, 717, 718, 719]);
    }
}
