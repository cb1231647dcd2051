"""swr.Catalog: a results database or an export directory, asked which kernel is best for a shape
and running it on device pointers. A thin layer over the C API (libswr_runtime.so), which does
the choosing and the launching (swr::TunedCatalog, swr::Attention, swr::Gemm); nothing here knows
about PyTorch, so that bindings for tensor libraries (a later swr.torch) build on it."""
import ctypes
import json

from . import _native


def _dtype(dtype):
    return str(dtype).encode()


def _attention_problem(batch, heads, seq_q, seq_kv, head_dim, dtype, causal):
    return _native.AttentionProblem(batch, heads, seq_q, seq_q if seq_kv is None else seq_kv,
                                    head_dim, _dtype(dtype), 1 if causal else 0)


def _gpu(gpu):
    return None if gpu is None else str(gpu).encode()


class Catalog:
    """Tuned kernels of a results database (opened read-only) or an export directory.

    best_attention / best_gemm return what `swr-tune query --json` prints, as a dict:
    "match" ("exact", "nearest" or "none"), "distance", "tuned_shape", "kernel" (config_key,
    measured: median_ms, tflops, ...) or "why" when nothing tuned serves the shape.
    run_attention / run_gemm enqueue the best kernel on integer device pointers (CUdeviceptr) and
    a stream handle (CUstream as an integer, 0 for the legacy default stream) in the calling
    thread's current CUDA context, and return once enqueued.
    """

    def __init__(self, path):
        self._handle = None  # until opened: close() and __del__ then have nothing to free
        self._native = _native.native()
        handle = ctypes.c_void_p()
        self._native.check(self._native.lib.swr_catalog_open(str(path).encode(),
                                                             ctypes.byref(handle)))
        self._handle = handle

    def close(self):
        if self._handle is not None:
            self._native.lib.swr_catalog_close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()

    def __del__(self):
        self.close()

    def _open_handle(self):
        if self._handle is None:
            raise _native.InvalidArgument("the catalog is closed")
        return self._handle

    @property
    def description(self):
        """"results database /path" or "export /dir"."""
        return self._native.take_string(self._native.lib.swr_catalog_description,
                                        self._open_handle())

    def best_attention(self, gpu, batch, heads, seq_q, head_dim, dtype="f16", causal=False,
                       seq_kv=None):
        problem = _attention_problem(batch, heads, seq_q, seq_kv, head_dim, dtype, causal)
        return json.loads(self._native.take_string(
            self._native.lib.swr_best_attention, self._open_handle(), _gpu(gpu),
            ctypes.byref(problem)))

    def best_gemm(self, gpu, m, n, k, dtype="f16"):
        problem = _native.GemmProblem(m, n, k, _dtype(dtype))
        return json.loads(self._native.take_string(
            self._native.lib.swr_best_gemm, self._open_handle(), _gpu(gpu), ctypes.byref(problem)))

    def run_attention(self, q, k, v, o, batch, heads, seq_q, head_dim, dtype="f16", causal=False,
                      seq_kv=None, stream=0, gpu=None, workspace=0):
        """O = softmax(Q K^T / sqrt(D) [causal]) V on row-major [B, H, S, D] tensors. `gpu`: the
        name to look up, None for the device that runs it."""
        problem = _attention_problem(batch, heads, seq_q, seq_kv, head_dim, dtype, causal)
        tensors = _native.AttentionTensors(q, k, v, o, workspace)
        self._native.check(self._native.lib.swr_run_attention(
            self._open_handle(), _gpu(gpu), ctypes.byref(problem), ctypes.byref(tensors), stream))

    def run_gemm(self, a, b, c, m, n, k, dtype="f16", stream=0, gpu=None):
        """C = A · B, row-major A [m x k], B [k x n], C [m x n]."""
        problem = _native.GemmProblem(m, n, k, _dtype(dtype))
        tensors = _native.GemmTensors(a, b, c)
        self._native.check(self._native.lib.swr_run_gemm(
            self._open_handle(), _gpu(gpu), ctypes.byref(problem), ctypes.byref(tensors), stream))
