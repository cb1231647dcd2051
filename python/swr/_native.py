"""libswr_runtime.so through ctypes: finding it, the C API's structures and signatures (swr/swr.h),
and its status codes turned into exceptions.

The library is looked for, in this order:
  1. $SWR_RUNTIME_LIBRARY, the path of the file itself, when set (an override, never needed);
  2. next to this package: swr/libswr_runtime.so, the one `pip install .` put in the wheel;
  3. the build tree this package sits in (<repository>/build/lib/libswr_runtime.so);
  4. the installed prefix this Python runs from (<sys.prefix>/lib/libswr_runtime.so);
  5. the dynamic loader's own search (LD_LIBRARY_PATH, ld.so.conf): "libswr_runtime.so".
"""
import ctypes
import os
import sys
from pathlib import Path

LIBRARY_NAME = "libswr_runtime.so"


def library_candidates():
    """The places looked at, in order (see the module's docstring)."""
    here = Path(__file__).resolve().parent
    candidates = []
    if os.environ.get("SWR_RUNTIME_LIBRARY"):
        candidates.append(os.environ["SWR_RUNTIME_LIBRARY"])
    candidates += [str(here / LIBRARY_NAME),
                   str(here.parent.parent / "build" / "lib" / LIBRARY_NAME),
                   str(Path(sys.prefix) / "lib" / LIBRARY_NAME),
                   LIBRARY_NAME]
    return candidates


def load_library():
    """The first candidate that loads; $SWR_RUNTIME_LIBRARY, when set, must be the one."""
    explicit = os.environ.get("SWR_RUNTIME_LIBRARY")
    if explicit:
        if not os.path.isfile(explicit):
            raise OSError(f"SWR_RUNTIME_LIBRARY={explicit}: no such file (allowed: the path of "
                          f"{LIBRARY_NAME})")
        return ctypes.CDLL(explicit)
    tried = []
    for candidate in library_candidates():
        if os.path.sep in candidate and not os.path.isfile(candidate):
            tried.append(f"{candidate} (absent)")
            continue
        try:
            return ctypes.CDLL(candidate)
        except OSError as error:
            tried.append(f"{candidate} ({error})")
    raise OSError(f"{LIBRARY_NAME} not found; set SWR_RUNTIME_LIBRARY to its path. Tried: "
                  + "; ".join(tried))


class SwrError(RuntimeError):
    """A failed call of the C API: `status` is its swr_status, the message swr_last_error()."""
    status = None


class InvalidArgument(SwrError, ValueError):
    status = 1


class KernelRefused(SwrError):
    status = 2


class NoDevice(SwrError):
    status = 3


class CudaError(SwrError):
    status = 4


class InternalError(SwrError):
    status = 5


ERRORS = {error.status: error for error in (InvalidArgument, KernelRefused, NoDevice, CudaError,
                                            InternalError)}


class AttentionProblem(ctypes.Structure):
    _fields_ = [("batch", ctypes.c_int), ("heads", ctypes.c_int), ("seq_q", ctypes.c_int),
                ("seq_kv", ctypes.c_int), ("head_dim", ctypes.c_int), ("dtype", ctypes.c_char_p),
                ("causal", ctypes.c_int)]


class AttentionProblemV2(ctypes.Structure):
    """swr_attention_problem_v2: with K/V heads (0: heads) and the causal alignment."""
    _fields_ = [("size", ctypes.c_uint32), ("batch", ctypes.c_int), ("heads", ctypes.c_int),
                ("kv_heads", ctypes.c_int), ("seq_q", ctypes.c_int), ("seq_kv", ctypes.c_int),
                ("head_dim", ctypes.c_int), ("dtype", ctypes.c_char_p), ("causal", ctypes.c_int),
                ("causal_align", ctypes.c_int)]


CAUSAL_ALIGNMENTS = {"top_left": 0, "bottom_right": 1}  # SWR_CAUSAL_TOP_LEFT, ..._BOTTOM_RIGHT


class AttentionStrides(ctypes.Structure):
    """swr_attention_strides: {batch, head, seq, dim} element strides of q, k, v and o."""
    _fields_ = [(name, ctypes.c_int64 * 4) for name in ("q", "k", "v", "o")]


class BackwardStrides(ctypes.Structure):
    """swr_attention_backward_strides: {batch, head, seq, dim} of q, k, v, o, dO, dQ, dK, dV."""
    _fields_ = [(name, ctypes.c_int64 * 4)
                for name in ("q", "k", "v", "o", "d_o", "dq", "dk", "dv")]


BACKWARD_DETERMINISTIC = 1  # SWR_BACKWARD_DETERMINISTIC


class AttentionTensors(ctypes.Structure):
    _fields_ = [("q", ctypes.c_uint64), ("k", ctypes.c_uint64), ("v", ctypes.c_uint64),
                ("o", ctypes.c_uint64), ("workspace", ctypes.c_uint64)]


class GemmProblem(ctypes.Structure):
    _fields_ = [("m", ctypes.c_int), ("n", ctypes.c_int), ("k", ctypes.c_int),
                ("dtype", ctypes.c_char_p)]


class GemmTensors(ctypes.Structure):
    _fields_ = [("a", ctypes.c_uint64), ("b", ctypes.c_uint64), ("c", ctypes.c_uint64)]


class Native:
    """The loaded library with its signatures declared; `check` turns a status into an exception."""

    def __init__(self, library):
        self.lib = library
        handle = ctypes.c_void_p
        string_out = ctypes.POINTER(ctypes.c_void_p)  # char**, freed with swr_string_free
        status = ctypes.c_int
        device_word = ctypes.c_void_p  # uint64_t / uintptr_t: a CUdeviceptr or a CUstream
        signatures = {
            "swr_version": (ctypes.c_char_p, []),
            "swr_status_name": (ctypes.c_char_p, [ctypes.c_int]),
            "swr_last_error": (ctypes.c_char_p, []),
            "swr_catalog_open": (status, [ctypes.c_char_p, ctypes.POINTER(handle)]),
            "swr_catalog_close": (None, [handle]),
            "swr_catalog_description": (status, [handle, string_out]),
            "swr_best_attention": (status, [handle, ctypes.c_char_p,
                                            ctypes.POINTER(AttentionProblem), string_out]),
            "swr_best_gemm": (status, [handle, ctypes.c_char_p, ctypes.POINTER(GemmProblem),
                                       string_out]),
            "swr_run_attention": (status, [handle, ctypes.c_char_p,
                                           ctypes.POINTER(AttentionProblem),
                                           ctypes.POINTER(AttentionTensors), ctypes.c_size_t]),
            "swr_run_gemm": (status, [handle, ctypes.c_char_p, ctypes.POINTER(GemmProblem),
                                      ctypes.POINTER(GemmTensors), ctypes.c_size_t]),
            "swr_prepare_attention": (status, [handle, ctypes.c_char_p,
                                               ctypes.POINTER(AttentionProblem),
                                               ctypes.POINTER(handle)]),
            "swr_prepare_gemm": (status, [handle, ctypes.c_char_p, ctypes.POINTER(GemmProblem),
                                          ctypes.POINTER(handle)]),
            # The hot path's calls: pointers and stream one by one, declared c_void_p, which
            # ctypes converts from an int in half the time of c_uint64 or c_size_t (the same
            # 64-bit integer argument in the calling convention of every 64-bit platform).
            "swr_launch_attention": (status, [handle] + [device_word] * 5
                                     + [ctypes.c_uint32, device_word]),
            "swr_launch_gemm": (status, [handle] + [device_word] * 4),
            # The second problem form: K/V heads, causal alignment and strides.
            "swr_best_attention_v2": (status, [handle, ctypes.c_char_p,
                                               ctypes.POINTER(AttentionProblemV2), string_out]),
            "swr_run_attention_v2": (status, [handle, ctypes.c_char_p,
                                              ctypes.POINTER(AttentionProblemV2),
                                              ctypes.POINTER(AttentionTensors),
                                              ctypes.POINTER(AttentionStrides), ctypes.c_size_t]),
            "swr_prepare_attention_v2": (status, [handle, ctypes.c_char_p,
                                                  ctypes.POINTER(AttentionProblemV2),
                                                  ctypes.POINTER(handle)]),
            "swr_launch_attention_v2": (status, [handle] + [device_word] * 4
                                        + [ctypes.POINTER(AttentionStrides), device_word,
                                           ctypes.c_uint32, device_word]),
            # The forward that writes the log-sum-exp, and the backward.
            "swr_launch_attention_v3": (status, [handle] + [device_word] * 5
                                        + [ctypes.POINTER(AttentionStrides), device_word,
                                           ctypes.c_uint32, device_word]),
            "swr_best_attention_backward": (status, [handle, ctypes.c_char_p,
                                                     ctypes.POINTER(AttentionProblemV2),
                                                     ctypes.c_uint32, string_out]),
            "swr_prepare_attention_backward": (status, [handle, ctypes.c_char_p,
                                                        ctypes.POINTER(AttentionProblemV2),
                                                        ctypes.c_uint32, ctypes.POINTER(handle)]),
            "swr_attention_backward_workspace_bytes": (status, [handle,
                                                                ctypes.POINTER(ctypes.c_uint64)]),
            "swr_launch_attention_backward": (status, [handle] + [device_word] * 9
                                              + [ctypes.POINTER(BackwardStrides), device_word,
                                                 ctypes.c_uint64, device_word]),
            "swr_default_catalog_path": (status, [string_out]),
            "swr_device_gpu_name": (status, [ctypes.c_int, string_out]),
            "swr_string_free": (None, [ctypes.c_void_p]),
        }
        for name, (restype, argtypes) in signatures.items():
            function = getattr(library, name)
            function.restype = restype
            function.argtypes = argtypes

    def check(self, status):
        if status != 0:
            message = self.lib.swr_last_error().decode()
            raise ERRORS.get(status, SwrError)(message)

    def take_string(self, call, *arguments):
        """Calls a function whose last argument is a char** it fills; returns the text."""
        text = ctypes.c_void_p()
        self.check(call(*arguments, ctypes.byref(text)))
        try:
            return ctypes.string_at(text.value).decode()
        finally:
            self.lib.swr_string_free(text)


_native = None


def native():
    """The library, loaded on first use."""
    global _native
    if _native is None:
        _native = Native(load_library())
    return _native
