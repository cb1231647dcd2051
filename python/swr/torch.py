"""swr for PyTorch: attention and matmul on CUDA tensors through libswr_runtime.so, as custom ops
(torch.ops.swr.attention, torch.ops.swr.matmul) with fake implementations, so that
torch.compile(fullgraph=True) keeps them in the graph and CUDA graphs capture them.

    import swr.torch
    out = swr.torch.attention(q, k, v, is_causal=True)      # q, k, v: [B, H, S, D] fp16/bf16
    out = swr.torch.attention(q, k, v, enable_gqa=True)     # k, v: [B, H_kv, S, D], H_kv | H
    c = swr.torch.matmul(a, b)                               # a [m, k] @ b [k, n]
    swr.torch.explain(q, k, v, is_causal=True)               # what would run, and why

The kernel is the catalog's choice for the shape (exact, else nearest as the C++ runtime decides)
on the tensors' device, launched on that device's current stream. The first call of a shape looks
it up and prepares its launch (swr_prepare_attention: the runtime loads the cubin into the
device's context); later calls find it in a per-shape table and cost the output's allocation and
one C call (swr_launch_attention, pointers and stream only): no database read, no compilation, no
host-device synchronisation. Eagerly the ops' dispatcher is skipped; under torch.compile the
calls go through the custom ops, which the graph keeps.

Layout: contiguous [B, H, S, D] tensors, and strided views whose rows the kernels read as they
lie (D stride 1, the other strides multiples of 8 elements, 16-byte aligned, rows not overlapping:
e.g. a [B, S, H, D] projection transposed to [B, H, S, D]), are passed without a copy; other
strides are copied to row-major first (explain() says `copies_inputs`). GEMM reads row-major
[m, k], [k, n]. A shape nothing tuned serves, or a scale other than 1/sqrt(D), follows
`fallback`: "sdpa" (the default) runs PyTorch's own operator with a warning, once per shape;
"error" raises swr.KernelRefused.
"""
import ctypes
import threading
import warnings
from typing import Optional

import torch

if not hasattr(torch.library, "custom_op"):
    raise ImportError(f"swr.torch needs torch 2.4 or newer (torch.library.custom_op); this is "
                      f"torch {torch.__version__}")

from . import _inputs  # noqa: E402
from ._native import KernelRefused  # noqa: E402
from .catalog import Catalog, attention_strides, device_gpu_name, numbered_catalog

_default_catalog = None
_lock = threading.Lock()


def _catalog_number(catalog):
    """How an op names the catalog: 0 for the default, else Catalog.number."""
    if catalog is None:
        return 0
    if not isinstance(catalog, Catalog):
        raise TypeError(f"catalog={catalog!r}: allowed None (the default) or a swr.Catalog")
    return catalog.number


def _catalog(number):
    global _default_catalog
    if number != 0:
        return numbered_catalog(number)
    with _lock:
        if _default_catalog is None:
            _default_catalog = Catalog()
        return _default_catalog


def _dtype_name(dtype):
    return str(dtype).removeprefix("torch.")


def _device(tensor):
    return (tensor.device.type, tensor.device.index)


def _attention_problem(q, k, v, is_causal, scale, fallback, enable_gqa=False):
    """(batch, heads, seq_q, seq_kv, head_dim, kv_heads, dtype, causal), or an exception naming
    what is wrong: the same checks eagerly, in the fake implementation and when tracing."""
    _inputs.check_fallback(fallback)
    for role, tensor in (("q", q), ("k", k), ("v", v)):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"{role} is a {type(tensor).__name__}: allowed a torch.Tensor")
    shape = _inputs.attention_shape(tuple(q.shape), tuple(k.shape), tuple(v.shape), enable_gqa)
    dtype = _inputs.catalog_dtype({"q": _dtype_name(q.dtype), "k": _dtype_name(k.dtype),
                                   "v": _dtype_name(v.dtype)})
    _inputs.check_devices({"q": _device(q), "k": _device(k), "v": _device(v)})
    _inputs.scale_refusal(scale, shape[4])  # a scale of the wrong type raises here
    return (*shape, dtype, bool(is_causal))


def _gemm_problem(a, b, fallback):
    _inputs.check_fallback(fallback)
    for role, tensor in (("a", a), ("b", b)):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"{role} is a {type(tensor).__name__}: allowed a torch.Tensor")
    shape = _inputs.gemm_shape(tuple(a.shape), tuple(b.shape))
    dtype = _inputs.catalog_dtype({"a": _dtype_name(a.dtype), "b": _dtype_name(b.dtype)})
    _inputs.check_devices({"a": _device(a), "b": _device(b)})
    return (*shape, dtype)


class _Plan:
    """What the first call of a shape decided: the launch (None: fall back) and the choice."""

    def __init__(self, launch, choice, refusal, dynamic_workspace, device_index):
        self.launch = launch  # a prepared swr.catalog.Launch, or None
        self.choice = choice
        self.refusal = refusal  # why swr does not run it, or None
        self.dynamic_workspace = dynamic_workspace
        self.device_index = device_index


def _decide(catalog, device_index, family, problem, refusal):
    """The catalog's answer for `problem` on the device, and its launch when swr serves it,
    prepared in the device's context (the runtime loads the kernel there now)."""
    gpu = device_gpu_name(device_index)
    if family == "attention":
        batch, heads, seq_q, seq_kv, head_dim, kv_heads, dtype, causal = problem
        choice = catalog.best_attention(gpu, batch, heads, seq_q, head_dim, dtype, causal, seq_kv,
                                        kv_heads)
        described = _inputs.shape_text(*problem)
    else:
        m, n, k, dtype = problem
        choice = catalog.best_gemm(gpu, m, n, k, dtype)
        described = f"m={m} n={n} k={k} {dtype}"
    if choice["match"] == "none":
        refusal = f"no tuned kernel for {described} on {gpu}: {choice.get('why', '')}"
    elif refusal is not None:
        refusal = f"{described}: {refusal}"
    if refusal is not None:
        return _Plan(None, choice, refusal, False, device_index)
    try:
        with torch.cuda.device(device_index):
            if family == "attention":
                launch = catalog.attention_launch(batch, heads, seq_q, head_dim, dtype, causal,
                                                  seq_kv, gpu, kv_heads)
            else:
                launch = catalog.gemm_launch(m, n, k, dtype, gpu)
    except KernelRefused as error:  # chosen, but cannot load here (no cubin, another arch)
        return _Plan(None, choice, f"{described}: {error}", False, device_index)
    persistence = choice["kernel"].get("config", {}).get("persistence")
    return _Plan(launch, choice, None, persistence == "dynamic", device_index)


_plans = {}  # (catalog, device, family, problem, scale) -> _Plan
_warned = set()


def _plan(catalog_number, device_index, family, problem, scale, fallback):
    """The plan of a problem, decided on its first call; raises under fallback "error" when swr
    does not serve it, warns once per shape under "sdpa"."""
    key = (catalog_number, device_index, family, problem, scale)
    plan = _plans.get(key)
    if plan is None:
        refusal = _inputs.scale_refusal(scale, problem[4]) if family == "attention" else None
        catalog = _catalog(catalog_number)
        with _lock:  # one preparation per shape, however many threads ask at once
            plan = _plans.get(key)
            if plan is None:
                plan = _plans[key] = _decide(catalog, device_index, family, problem, refusal)
    if plan.refusal is not None:
        if fallback == "error":
            raise KernelRefused(plan.refusal + " (fallback='error'; fallback='sdpa' runs "
                                "PyTorch's operator instead)")
        if fallback == "sdpa" and key not in _warned:
            _warned.add(key)
            peer = "scaled_dot_product_attention" if family == "attention" else "matmul"
            warnings.warn(f"swr: {plan.refusal}; running torch {peer} instead (warned once per "
                          "shape)", RuntimeWarning, stacklevel=5)
    return plan


# The hot path: a call's plan found by what its tensors are (shape, dtype, device) and its
# arguments, without re-checking them. A call whose checks or lookup raise is not remembered, so
# it raises again. The cost of a call after the first of its shape is this lookup, the output's
# allocation, the tensors' pointers, the current stream, and one C call (swr_launch_*).
_calls = {}


def _attention_plan(q, k, v, is_causal, scale, fallback, catalog, enable_gqa):
    try:
        key = (q.shape, k.shape, v.shape, q.dtype, k.dtype, v.dtype, q.device, k.device,
               v.device, is_causal, scale, fallback, catalog, enable_gqa)
        return _calls[key]
    except (AttributeError, TypeError):  # not a tensor, or an unhashable scale: checks say so
        key = None
    except KeyError:
        pass
    problem = _attention_problem(q, k, v, is_causal, scale, fallback, enable_gqa)
    plan = _plan(catalog, q.device.index, "attention", problem, scale, fallback)
    if key is not None:
        _calls[key] = plan
    return plan


def _gemm_plan(a, b, fallback, catalog):
    try:
        key = (a.shape, b.shape, a.dtype, b.dtype, a.device, b.device, fallback, catalog)
        return _calls[key]
    except (AttributeError, TypeError):
        key = None
    except KeyError:
        pass
    problem = _gemm_problem(a, b, fallback)
    plan = _plan(catalog, a.device.index, "gemm", problem, None, fallback)
    if key is not None:
        _calls[key] = plan
    return plan


# Raw integers from PyTorch's C side, without the Python wrappers' checks (the tensors are on
# CUDA, so CUDA is initialised).
try:
    _raw_stream = torch._C._cuda_getCurrentRawStream  # (device index) -> CUstream as an integer
    _current_device = torch._C._cuda_getDevice
    _capturing = torch._C._cuda_isCurrentStreamCapturing
except AttributeError:  # pragma: no cover - older PyTorch, or one built without CUDA
    def _raw_stream(index):
        return torch.cuda.current_stream(index).cuda_stream

    def _current_device():
        return torch.cuda.current_device()

    def _capturing():
        return torch.cuda.is_current_stream_capturing()


def _launch(launch, index, *pointers):
    """One C call on the current stream of device `index`, made current if it is not."""
    if _current_device() == index:
        status = launch.function(launch.handle, *pointers, _raw_stream(index))
    else:
        with torch.cuda.device(index):
            status = launch.function(launch.handle, *pointers, _raw_stream(index))
    if status:
        launch.fail(status)


ZEROED = 1  # SWR_WORKSPACE_ZEROED (swr/swr.h)


class _CounterPool:
    """Tile counters of the dynamic-persistence kernels for one stream, all zeroed at once: a call
    takes the next unused one and launches with SWR_WORKSPACE_ZEROED, so no clear is enqueued per
    call; when all are used, one clear of the whole pool is enqueued on the same stream, ordered
    after every kernel that used them. The lock keeps take-and-enqueue in one order per stream."""

    SIZE = 4096

    def __init__(self, device):
        self.counters = torch.zeros(self.SIZE, dtype=torch.int32, device=device)
        self.base = self.counters.data_ptr()
        self.used = 0
        self.lock = threading.Lock()


_pools = {}  # (device index, stream) -> _CounterPool


def _launch_dynamic(launch, index, q, k, v, out):
    """The launch of a dynamic-persistence kernel on the current stream of device `index`."""
    stream = _raw_stream(index)
    if _capturing():
        # A captured graph gets a counter of its own, which swr clears in the graph, so that its
        # replays, on whatever stream, share none with eager calls or other graphs.
        workspace = torch.empty(1, dtype=torch.int32, device=q.device).data_ptr()
        return _launch(launch, index, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                       workspace, 0)
    pool = _pools.get((index, stream))
    if pool is None:
        pool = _pools.setdefault((index, stream), _CounterPool(q.device))
    with pool.lock:
        if pool.used == pool.SIZE:
            pool.counters.zero_()
            pool.used = 0
        workspace = pool.base + 4 * pool.used
        pool.used += 1
        status = launch.function(launch.handle, q.data_ptr(), k.data_ptr(), v.data_ptr(),
                                 out.data_ptr(), workspace, ZEROED, stream)
    if status:
        launch.fail(status)


def _attention_call(q, k, v, is_causal, scale, fallback, catalog, enable_gqa=False):
    try:  # the hot path: the plan of a call like this one, found by its tensors and arguments
        plan = _calls[(q.shape, k.shape, v.shape, q.dtype, k.dtype, v.dtype, q.device, k.device,
                       v.device, is_causal, scale, fallback, catalog, enable_gqa)]
    except (KeyError, AttributeError, TypeError):
        plan = _attention_plan(q, k, v, is_causal, scale, fallback, catalog, enable_gqa)
    launch = plan.launch
    if launch is None:
        gqa = {"enable_gqa": True} if enable_gqa else {}  # torch >= 2.5 has it
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=is_causal,
                                                                scale=scale, **gqa)
    if not (q.is_contiguous() and k.is_contiguous() and v.is_contiguous()):
        return _strided_attention(plan, launch, q, k, v)
    out = torch.empty_like(q)
    index = plan.device_index
    if _current_device() != index:
        with torch.cuda.device(index):
            _attention_launch(plan, launch, index, q, k, v, out)
        return out
    _attention_launch(plan, launch, index, q, k, v, out)
    return out


def _strided_attention(plan, launch, q, k, v):
    """Tensors that are not all contiguous: the ones the kernels read as they lie are passed with
    their strides (swr_launch_attention_v2), the others copied to row-major first; the output
    takes q's layout when it is dense (empty_like)."""
    tensors, strides = [], []
    for tensor in (q, k, v):
        taken = _inputs.kernel_strides(tuple(tensor.shape), tensor.stride(), tensor.data_ptr())
        if taken is None:
            tensor = tensor.contiguous()
            taken = tensor.stride()
        tensors.append(tensor)
        strides.append(taken)
    q, k, v = tensors
    out = torch.empty_like(q)
    if _inputs.kernel_strides(tuple(out.shape), out.stride(), out.data_ptr()) is None:
        out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    layout = attention_strides(*strides, out.stride())
    index = plan.device_index
    workspace = 0
    if plan.dynamic_workspace:  # a counter of its own, cleared by swr on the stream
        workspace = torch.empty(1, dtype=torch.int32, device=q.device).data_ptr()
    with torch.cuda.device(index):
        status = launch.strided_function(launch.handle, q.data_ptr(), k.data_ptr(), v.data_ptr(),
                                         out.data_ptr(), ctypes.byref(layout), workspace, 0,
                                         _raw_stream(index))
    if status:
        launch.fail(status)
    return out


def _attention_launch(plan, launch, index, q, k, v, out):
    if plan.dynamic_workspace:
        return _launch_dynamic(launch, index, q, k, v, out)
    status = launch.function(launch.handle, q.data_ptr(), k.data_ptr(), v.data_ptr(),
                             out.data_ptr(), 0, 0, _raw_stream(index))
    if status:
        launch.fail(status)


@torch.library.custom_op("swr::attention", mutates_args=())
def _attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, is_causal: bool,
                  scale: Optional[float], fallback: str, catalog: int,
                  enable_gqa: bool) -> torch.Tensor:
    return _attention_call(q, k, v, is_causal, scale, fallback, catalog, enable_gqa)


@_attention_op.register_fake
def _attention_fake(q, k, v, is_causal, scale, fallback, catalog, enable_gqa):
    _attention_problem(q, k, v, is_causal, scale, fallback, enable_gqa)
    return q.new_empty(q.shape)


def _matmul_call(a, b, fallback, catalog):
    plan = _gemm_plan(a, b, fallback, catalog)
    launch = plan.launch
    if launch is None:
        return torch.matmul(a, b)
    a, b = a.contiguous(), b.contiguous()
    c = a.new_empty((a.shape[0], b.shape[1]))
    _launch(launch, plan.device_index, a.data_ptr(), b.data_ptr(), c.data_ptr())
    return c


@torch.library.custom_op("swr::matmul", mutates_args=())
def _matmul_op(a: torch.Tensor, b: torch.Tensor, fallback: str, catalog: int) -> torch.Tensor:
    return _matmul_call(a, b, fallback, catalog)


@_matmul_op.register_fake
def _matmul_fake(a, b, fallback, catalog):
    m, n, _, _ = _gemm_problem(a, b, fallback)
    return a.new_empty((m, n))


def attention(q, k, v, is_causal=False, scale=None, enable_gqa=False, *, fallback="sdpa",
              catalog=None):
    """softmax(Q K^T * scale [causal, top-left aligned]) V, as
    torch.nn.functional.scaled_dot_product_attention, for [B, H, S, D] CUDA fp16/bf16 tensors;
    enable_gqa=True, as SDPA's, lets K and V have fewer heads (a divisor of Q's: grouped-query
    attention, each K/V head serving consecutive query heads). `catalog`: a swr.Catalog, None for
    the default (swr.default_catalog_path())."""
    if torch.compiler.is_compiling():  # the op, which the graph keeps
        return torch.ops.swr.attention(q, k, v, bool(is_causal), scale, fallback,
                                       _catalog_number(catalog), bool(enable_gqa))
    # Eagerly the same code without the dispatcher's cost.
    return _attention_call(q, k, v, bool(is_causal), scale, fallback, _catalog_number(catalog),
                           bool(enable_gqa))


def matmul(a, b, *, fallback="sdpa", catalog=None):
    """a @ b for 2-D CUDA fp16/bf16 tensors [m, k] and [k, n]. fallback "sdpa" (the same word
    for every op: PyTorch's own operator, here torch.matmul) or "error"."""
    if torch.compiler.is_compiling():
        return torch.ops.swr.matmul(a, b, fallback, _catalog_number(catalog))
    return _matmul_call(a, b, fallback, _catalog_number(catalog))


def _explained(plan, copies):
    choice = plan.choice
    answer = {"runs": "swr" if plan.launch is not None else "fallback", "match": choice["match"],
              "gpu": choice["gpu"], "source": choice["source"], "copies_inputs": copies}
    if plan.refusal is not None:
        answer["why_not_swr"] = plan.refusal
    if choice["match"] != "none":
        kernel = choice["kernel"]
        answer.update(variant=kernel["config_key"], distance=choice["distance"],
                      tuned_shape=choice["tuned_shape"], measured=kernel["measured"])
    return answer


def explain(q, k, v, is_causal=False, scale=None, enable_gqa=False, *, catalog=None):
    """What attention(q, k, v, ...) runs, without running it: {"runs": "swr" | "fallback",
    "match": exact | nearest | none, "variant", "distance", "tuned_shape", "measured" (the
    tuner's figures), "why_not_swr", "copies_inputs" (a tensor the kernels cannot read as it
    lies is copied first)}."""
    problem = _attention_problem(q, k, v, is_causal, scale, "sdpa", bool(enable_gqa))
    plan = _plan(_catalog_number(catalog), q.device.index, "attention", problem, scale, "explain")
    copies = not all(t.is_contiguous() or _inputs.kernel_strides(tuple(t.shape), t.stride(),
                                                                 t.data_ptr()) is not None
                     for t in (q, k, v))
    return _explained(plan, copies)


def explain_matmul(a, b, *, catalog=None):
    """What matmul(a, b) runs, as explain() says it."""
    problem = _gemm_problem(a, b, "sdpa")
    plan = _plan(_catalog_number(catalog), a.device.index, "gemm", problem, None, "explain")
    return _explained(plan, not (a.is_contiguous() and b.is_contiguous()))
