"""swr.Catalog: a results database or an export directory, asked which kernel is best for a shape
and running it on device pointers. A thin layer over the C API (libswr_runtime.so), which does
the choosing and the launching (swr::TunedCatalog, swr::Attention, swr::Gemm); nothing here knows
about PyTorch, so that bindings for tensor libraries (a later swr.torch) build on it."""
import ctypes
import itertools
import json
import weakref

from . import _native


def _dtype(dtype):
    return str(dtype).encode()


def _attention_problem(batch, heads, seq_q, seq_kv, head_dim, dtype, causal, kv_heads=0,
                       causal_align="top_left"):
    """The C API's second problem form (swr_attention_problem_v2): kv_heads 0 or None means
    heads; causal_align "top_left" or "bottom_right" (the library checks both)."""
    if causal_align not in _native.CAUSAL_ALIGNMENTS:
        raise _native.InvalidArgument(f"causal_align={causal_align!r}: allowed "
                                      + ", ".join(map(repr, _native.CAUSAL_ALIGNMENTS)))
    return _native.AttentionProblemV2(ctypes.sizeof(_native.AttentionProblemV2), batch, heads,
                                      kv_heads or 0, seq_q, seq_q if seq_kv is None else seq_kv,
                                      head_dim, _dtype(dtype), 1 if causal else 0,
                                      _native.CAUSAL_ALIGNMENTS[causal_align])


def attention_strides(q, k, v, o):
    """swr_attention_strides from four (batch, head, seq, dim) element-stride tuples (None: the
    tensor is contiguous)."""
    strides = _native.AttentionStrides()
    for name, given in (("q", q), ("k", k), ("v", v), ("o", o)):
        if given is not None:
            getattr(strides, name)[:] = [int(x) for x in given]
    return strides


def backward_strides(**given):
    """swr_attention_backward_strides from (batch, head, seq, dim) element-stride tuples named
    q, k, v, o, d_o, dq, dk, dv (a name left out or None: that tensor is contiguous)."""
    strides = _native.BackwardStrides()
    for name, value in given.items():
        if name not in dict(_native.BackwardStrides._fields_):
            raise _native.InvalidArgument(
                f"backward_strides({name}=...): allowed "
                + ", ".join(field for field, _ in _native.BackwardStrides._fields_))
        if value is not None:
            getattr(strides, name)[:] = [int(x) for x in value]
    return strides


def _backward_flags(deterministic):
    return _native.BACKWARD_DETERMINISTIC if deterministic else 0


def _gpu(gpu):
    return None if gpu is None else str(gpu).encode()


# Open catalogs by number, for callers that can pass an integer only (a custom op's arguments).
_numbers = itertools.count(1)
_numbered = weakref.WeakValueDictionary()


def numbered_catalog(number):
    """The open Catalog whose `number` this is (KeyError once it is gone)."""
    return _numbered[number]


def default_catalog_path():
    """The results database swr-tune uses without --db: $SWR_DB, else
    $XDG_CACHE_HOME/swr/results.db, else ~/.cache/swr/results.db (the C++ side decides)."""
    native = _native.native()
    return native.take_string(native.lib.swr_default_catalog_path)


def device_gpu_name(ordinal):
    """The name the catalog knows CUDA device `ordinal` by ("h200"); NoDevice without one."""
    native = _native.native()
    return native.take_string(native.lib.swr_device_gpu_name, int(ordinal))


class Launch:
    """One problem's launch prepared by the runtime (swr_prepare_attention / swr_prepare_gemm):
    the catalog's choice made and the kernel loaded into the CUDA context current when it was
    made, so that a call is one C call that looks nothing up. Call it with the device pointers
    (attention: q, k, v, o, workspace (0: swr's counter of the stream), flags (0, or
    SWR_WORKSPACE_ZEROED = 1 for a workspace that is 0 already: swr/swr.h); GEMM: a, b, c) and the
    stream, with that context current. What a binding keeps per shape.

    The hot path of a binding may call `function(handle, *pointers, stream)` itself (or the C
    function at `address`, from compiled code) and pass a nonzero status to `fail`. Closing the
    catalog sets `handle` to None: the C call then refuses it instead of touching freed memory."""

    def __init__(self, catalog, function, handle, strided_function=None, lse_function=None):
        self._catalog = catalog  # kept alive as long as the launch
        self.function = function
        self.address = ctypes.cast(function, ctypes.c_void_p).value
        self.handle = handle
        # attention: function(handle, q, k, v, o, byref(AttentionStrides), workspace, flags,
        # stream), for tensors that are not contiguous (swr_launch_attention_v2).
        self.strided_function = strided_function
        # attention: function(handle, q, k, v, o, lse, strides or None, workspace, flags, stream),
        # which also writes each row's log-sum-exp (swr_launch_attention_v3).
        self.lse_function = lse_function

    def call_with_lse(self, q, k, v, o, lse, strides=None, workspace=0, flags=0, stream=0):
        """The forward that also writes lse ([B, H, S_q] fp32, contiguous): what a backward
        needs. `strides`: attention_strides(...) or None (contiguous)."""
        status = self.lse_function(self.handle, q, k, v, o, lse,
                                   None if strides is None else ctypes.byref(strides), workspace,
                                   flags, stream)
        if status:
            self.fail(status)

    def __call__(self, *pointers, stream=0):
        status = self.function(self.handle, *pointers, stream)
        if status:
            self.fail(status)

    def fail(self, status):
        self._catalog._open_handle()  # a closed catalog says so
        self._catalog._native.check(status)


class BackwardLaunch(Launch):
    """One attention backward prepared (swr_prepare_attention_backward): `workspace_bytes` is the
    device workspace a call needs (the caller allocates it, one per call that may overlap);
    call it as launch(q, k, v, o, d_o, lse, dq, dk, dv, workspace=, strides=, stream=)."""

    def __init__(self, catalog, function, handle, workspace_bytes):
        super().__init__(catalog, function, handle)
        self.workspace_bytes = workspace_bytes

    def __call__(self, q, k, v, o, d_o, lse, dq, dk, dv, workspace=0, strides=None, stream=0,
                 workspace_bytes=None):
        """`strides`: backward_strides(...) or None (all contiguous); `workspace_bytes`: the
        workspace's size (default: self.workspace_bytes)."""
        size = self.workspace_bytes if workspace_bytes is None else workspace_bytes
        status = self.function(self.handle, q, k, v, o, d_o, lse, dq, dk, dv,
                               None if strides is None else ctypes.byref(strides), workspace,
                               size, stream)
        if status:
            self.fail(status)


class Catalog:
    """Tuned kernels of a results database (opened read-only) or an export directory.

    best_attention / best_gemm return what `swr-tune query --json` prints, as a dict:
    "match" ("exact", "nearest" or "none"), "distance", "tuned_shape", "kernel" (config_key,
    measured: median_ms, tflops, ...) or "why" when nothing tuned serves the shape.
    run_attention / run_gemm enqueue the best kernel on integer device pointers (CUdeviceptr) and
    a stream handle (CUstream as an integer, 0 for the legacy default stream) in the calling
    thread's current CUDA context, and return once enqueued. attention_launch / gemm_launch
    prepare that once for a problem (Launch), for callers that run one shape many times.
    """

    def __init__(self, path=None):
        """`path`: a results database or an export directory; None: default_catalog_path()."""
        self._handle = None  # until opened: close() and __del__ then have nothing to free
        self._native = _native.native()
        if path is None:
            path = default_catalog_path()
        handle = ctypes.c_void_p()
        self._native.check(self._native.lib.swr_catalog_open(str(path).encode(),
                                                             ctypes.byref(handle)))
        self._handle = handle
        self._launches = weakref.WeakSet()  # prepared from it: closed with it
        self.number = next(_numbers)  # 1, 2, ...: this process's name for it
        _numbered[self.number] = self

    def close(self):
        for launch in list(getattr(self, "_launches", ())):
            launch.handle = None
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
                       seq_kv=None, kv_heads=0, causal_align="top_left"):
        """kv_heads: K/V heads (grouped-query attention; 0: heads); causal_align: "top_left" or
        "bottom_right" (query i sees keys j <= i + seq_kv - seq_q)."""
        problem = _attention_problem(batch, heads, seq_q, seq_kv, head_dim, dtype, causal,
                                     kv_heads, causal_align)
        return json.loads(self._native.take_string(
            self._native.lib.swr_best_attention_v2, self._open_handle(), _gpu(gpu),
            ctypes.byref(problem)))

    def best_gemm(self, gpu, m, n, k, dtype="f16"):
        problem = _native.GemmProblem(m, n, k, _dtype(dtype))
        return json.loads(self._native.take_string(
            self._native.lib.swr_best_gemm, self._open_handle(), _gpu(gpu), ctypes.byref(problem)))

    def run_attention(self, q, k, v, o, batch, heads, seq_q, head_dim, dtype="f16", causal=False,
                      seq_kv=None, stream=0, gpu=None, workspace=0, kv_heads=0,
                      causal_align="top_left", strides=None):
        """O = softmax(Q K^T / sqrt(D) [causal]) V on [B, H, S, D] tensors (K and V: kv_heads
        heads), row-major unless `strides` (attention_strides(...)) says otherwise. `gpu`: the
        name to look up, None for the device that runs it."""
        problem = _attention_problem(batch, heads, seq_q, seq_kv, head_dim, dtype, causal,
                                     kv_heads, causal_align)
        tensors = _native.AttentionTensors(q, k, v, o, workspace)
        self._native.check(self._native.lib.swr_run_attention_v2(
            self._open_handle(), _gpu(gpu), ctypes.byref(problem), ctypes.byref(tensors),
            None if strides is None else ctypes.byref(strides), stream))

    def run_gemm(self, a, b, c, m, n, k, dtype="f16", stream=0, gpu=None):
        """C = A · B, row-major A [m x k], B [k x n], C [m x n]."""
        problem = _native.GemmProblem(m, n, k, _dtype(dtype))
        tensors = _native.GemmTensors(a, b, c)
        self._native.check(self._native.lib.swr_run_gemm(
            self._open_handle(), _gpu(gpu), ctypes.byref(problem), ctypes.byref(tensors), stream))

    def attention_launch(self, batch, heads, seq_q, head_dim, dtype="f16", causal=False,
                         seq_kv=None, gpu=None, kv_heads=0, causal_align="top_left"):
        """run_attention prepared for one problem in the calling thread's current CUDA context
        (which the launch's calls need current): launch(q, k, v, o, workspace, flags, stream=s);
        for tensors that are not contiguous its strided_function (swr_launch_attention_v2)."""
        problem = _attention_problem(batch, heads, seq_q, seq_kv, head_dim, dtype, causal,
                                     kv_heads, causal_align)
        launch = self._prepared(self._native.lib.swr_prepare_attention_v2, ctypes.byref(problem),
                                gpu, self._native.lib.swr_launch_attention,
                                self._native.lib.swr_launch_attention_v2)
        launch.lse_function = self._native.lib.swr_launch_attention_v3
        return launch

    def best_attention_backward(self, gpu, batch, heads, seq_q, head_dim, dtype="f16",
                                causal=False, seq_kv=None, kv_heads=0, causal_align="top_left",
                                deterministic=False):
        """best_attention for the backward of that problem ("family": "attention-backward");
        `deterministic`: only variants whose dQ is the same bit for bit on every run."""
        problem = _attention_problem(batch, heads, seq_q, seq_kv, head_dim, dtype, causal,
                                     kv_heads, causal_align)
        return json.loads(self._native.take_string(
            self._native.lib.swr_best_attention_backward, self._open_handle(), _gpu(gpu),
            ctypes.byref(problem), _backward_flags(deterministic)))

    def attention_backward_launch(self, batch, heads, seq_q, head_dim, dtype="f16", causal=False,
                                  seq_kv=None, gpu=None, kv_heads=0, causal_align="top_left",
                                  deterministic=False):
        """The backward of one problem prepared in the calling thread's current CUDA context
        (BackwardLaunch)."""
        problem = _attention_problem(batch, heads, seq_q, seq_kv, head_dim, dtype, causal,
                                     kv_heads, causal_align)
        handle = ctypes.c_void_p()
        self._native.check(self._native.lib.swr_prepare_attention_backward(
            self._open_handle(), _gpu(gpu), ctypes.byref(problem), _backward_flags(deterministic),
            ctypes.byref(handle)))
        size = ctypes.c_uint64()
        self._native.check(self._native.lib.swr_attention_backward_workspace_bytes(
            handle, ctypes.byref(size)))
        launch = BackwardLaunch(self, self._native.lib.swr_launch_attention_backward, handle.value,
                                size.value)
        self._launches.add(launch)
        return launch

    def gemm_launch(self, m, n, k, dtype="f16", gpu=None):
        """run_gemm prepared for one problem (as attention_launch): launch(a, b, c, stream=s)."""
        problem = _native.GemmProblem(m, n, k, _dtype(dtype))
        return self._prepared(self._native.lib.swr_prepare_gemm, ctypes.byref(problem), gpu,
                              self._native.lib.swr_launch_gemm)

    def _prepared(self, prepare, problem, gpu, function, strided_function=None):
        handle = ctypes.c_void_p()
        self._native.check(prepare(self._open_handle(), _gpu(gpu), problem, ctypes.byref(handle)))
        launch = Launch(self, function, handle.value, strided_function)
        self._launches.add(launch)
        return launch
