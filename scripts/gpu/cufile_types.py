"""The cuFile C types the GPU scripts pass through ctypes, defined once (the Rust definition is
crates/cufile/abi, which tests/cufile_header.rs checks against include/cufile.h; the sizes
asserted below are the same)."""
import ctypes


class CUfileError(ctypes.Structure):
    """CUfileError_t: the status and, for CU_FILE_CUDA_DRIVER_ERROR, the CUresult."""
    _fields_ = [("err", ctypes.c_int), ("cu_err", ctypes.c_int)]


class _Handle(ctypes.Union):
    _fields_ = [("fd", ctypes.c_int), ("handle", ctypes.c_void_p)]


class CUfileDescr(ctypes.Structure):
    """CUfileDescr_t: type, the union of fd and handle at 8, fs_ops."""
    _fields_ = [("type", ctypes.c_int), ("handle", _Handle), ("fs_ops", ctypes.c_void_p)]

    @classmethod
    def of_fd(cls, fd, kind=1):
        """The descriptor of file descriptor `fd` (type CU_FILE_HANDLE_TYPE_OPAQUE_FD unless
        `kind` says otherwise), the rest zero."""
        d = cls(type=kind)
        d.handle.fd = fd
        return d


class CUfileIOVec(ctypes.Structure):
    """CUfileIOVec_t: one buffer of cuFileReadv/cuFileWritev."""
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class CUfileIOParams(ctypes.Structure):
    """CUfileIOParams_t: one batch entry (the union's batch member flattened)."""
    _fields_ = [("mode", ctypes.c_int), ("devPtr_base", ctypes.c_void_p), ("file_offset", ctypes.c_int64),
                ("devPtr_offset", ctypes.c_int64), ("size", ctypes.c_size_t), ("fh", ctypes.c_void_p),
                ("opcode", ctypes.c_int), ("cookie", ctypes.c_void_p)]


class CUfileIOEvents(ctypes.Structure):
    """CUfileIOEvents_t: one completion."""
    _fields_ = [("cookie", ctypes.c_void_p), ("status", ctypes.c_int), ("ret", ctypes.c_size_t)]


assert ctypes.sizeof(CUfileError) == 8
assert ctypes.sizeof(CUfileDescr) == 24 and CUfileDescr.handle.offset == 8 and CUfileDescr.fs_ops.offset == 16
assert ctypes.sizeof(CUfileIOVec) == 16
assert ctypes.sizeof(CUfileIOParams) == 64 and CUfileIOParams.fh.offset == 40 and CUfileIOParams.cookie.offset == 56
assert ctypes.sizeof(CUfileIOEvents) == 24 and CUfileIOEvents.status.offset == 8 and CUfileIOEvents.ret.offset == 16
