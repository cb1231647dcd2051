"""swr for PyTorch: attention and matmul on CUDA tensors through libswr_runtime.so, as custom ops
(torch.ops.swr.attention, torch.ops.swr.matmul) with fake implementations, so that
torch.compile(fullgraph=True) keeps them in the graph and CUDA graphs capture them.

    import swr.torch
    out = swr.torch.attention(q, k, v, is_causal=True)      # q, k, v: [B, H, S, D] fp16/bf16
    c = swr.torch.matmul(a, b)                               # a [m, k] @ b [k, n]
    swr.torch.explain(q, k, v, is_causal=True)               # what would run, and why

The kernel is the catalog's choice for the shape (exact, else nearest as the C++ runtime decides)
on the tensors' device, launched on that device's current stream. The first call of a shape looks
it up (and the runtime loads its cubin); later calls find the launch in a per-shape table and cost
one C call: no database read, no compilation, no host-device synchronisation.

Layout: the kernels read row-major [B, H, S, D] (and [m, k], [k, n]); other strides are copied
to that layout first. A shape nothing tuned serves, or a scale other than 1/sqrt(D), follows
`fallback`: "sdpa" (the default) runs PyTorch's own operator with a warning, once per shape;
"error" raises swr.KernelRefused.
"""
import threading
import warnings
from typing import Optional

import torch

if not hasattr(torch.library, "custom_op"):
    raise ImportError(f"swr.torch needs torch 2.4 or newer (torch.library.custom_op); this is "
                      f"torch {torch.__version__}")

from . import _inputs  # noqa: E402
from ._native import KernelRefused  # noqa: E402
from .catalog import Catalog, device_gpu_name, numbered_catalog

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


def _attention_problem(q, k, v, is_causal, scale, fallback):
    """(batch, heads, seq_q, seq_kv, head_dim, dtype, causal), or an exception naming what is
    wrong: the same checks eagerly, in the fake implementation and when tracing."""
    _inputs.check_fallback(fallback)
    for role, tensor in (("q", q), ("k", k), ("v", v)):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"{role} is a {type(tensor).__name__}: allowed a torch.Tensor")
    shape = _inputs.attention_shape(tuple(q.shape), tuple(k.shape), tuple(v.shape))
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

    def __init__(self, launch, choice, refusal, dynamic_workspace):
        self.launch = launch
        self.choice = choice
        self.refusal = refusal  # why swr does not run it, or None
        self.dynamic_workspace = dynamic_workspace


def _decide(catalog, device_index, family, problem, refusal):
    """The catalog's answer for `problem` on the device, and its launch when swr serves it."""
    gpu = device_gpu_name(device_index)
    if family == "attention":
        batch, heads, seq_q, seq_kv, head_dim, dtype, causal = problem
        choice = catalog.best_attention(gpu, batch, heads, seq_q, head_dim, dtype, causal, seq_kv)
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
        return _Plan(None, choice, refusal, False)
    if family == "attention":
        launch = catalog.attention_launch(batch, heads, seq_q, head_dim, dtype, causal, seq_kv, gpu)
    else:
        launch = catalog.gemm_launch(m, n, k, dtype, gpu)
    persistence = choice["kernel"].get("config", {}).get("persistence")
    return _Plan(launch, choice, None, persistence == "dynamic")


_plans = {}  # (catalog, device, family, problem, scale) -> _Plan
_warned = set()


def _plan(catalog_number, device_index, family, problem, scale, fallback):
    """The plan of a problem, decided on its first call; raises under fallback "error" when swr
    does not serve it, warns once per shape under "sdpa"."""
    key = (catalog_number, device_index, family, problem, scale)
    plan = _plans.get(key)
    if plan is None:
        refusal = _inputs.scale_refusal(scale, problem[4]) if family == "attention" else None
        plan = _plans.setdefault(key, _decide(_catalog(catalog_number), device_index, family,
                                              problem, refusal))
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


# The hot path: the plan of a call found by what its tensors are, without re-checking them. A
# call whose checks or lookup raise is not remembered, so it raises again.
_calls = {}


def _call_plan(family, tensors, arguments, checked_problem):
    try:
        key = (family, *((t.shape, t.dtype, t.device) for t in tensors), *arguments)
        plan = _calls.get(key)
    except AttributeError:  # not a tensor: the checks say so
        key, plan = None, None
    if plan is None:
        problem = checked_problem()
        device = tensors[0].device.index
        scale = arguments[1] if family == "attention" else None
        plan = _plan(arguments[-1], device, family, problem, scale, arguments[-2])
        if key is not None:
            _calls[key] = plan
    return plan

try:
    _raw_stream = torch._C._cuda_getCurrentRawStream  # an integer, without a Stream object
except AttributeError:  # pragma: no cover - older PyTorch
    def _raw_stream(index):
        return torch.cuda.current_stream(index).cuda_stream


def _launch_on_device(device_index, body):
    if torch.cuda.current_device() == device_index:
        return body()
    with torch.cuda.device(device_index):
        return body()


def _attention_call(q, k, v, is_causal, scale, fallback, catalog):
    plan = _call_plan("attention", (q, k, v), (is_causal, scale, fallback, catalog),
                      lambda: _attention_problem(q, k, v, is_causal, scale, fallback))
    if plan.launch is None:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=is_causal,
                                                                scale=scale)
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    # Its own counter per call: a launch running beside another (or in a graph) shares none.
    workspace = (torch.empty(1, dtype=torch.int32, device=q.device).data_ptr()
                 if plan.dynamic_workspace else 0)
    index = q.device.index
    _launch_on_device(index, lambda: plan.launch(q.data_ptr(), k.data_ptr(), v.data_ptr(),
                                                 out.data_ptr(), workspace,
                                                 stream=_raw_stream(index)))
    return out


@torch.library.custom_op("swr::attention", mutates_args=())
def _attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, is_causal: bool,
                  scale: Optional[float], fallback: str, catalog: int) -> torch.Tensor:
    return _attention_call(q, k, v, is_causal, scale, fallback, catalog)


@_attention_op.register_fake
def _attention_fake(q, k, v, is_causal, scale, fallback, catalog):
    _attention_problem(q, k, v, is_causal, scale, fallback)
    return q.new_empty(q.shape)


def _matmul_call(a, b, fallback, catalog):
    plan = _call_plan("gemm", (a, b), (fallback, catalog), lambda: _gemm_problem(a, b, fallback))
    if plan.launch is None:
        return torch.matmul(a, b)
    a, b = a.contiguous(), b.contiguous()
    c = torch.empty((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
    index = a.device.index
    _launch_on_device(index, lambda: plan.launch(a.data_ptr(), b.data_ptr(), c.data_ptr(),
                                                 stream=_raw_stream(index)))
    return c


@torch.library.custom_op("swr::matmul", mutates_args=())
def _matmul_op(a: torch.Tensor, b: torch.Tensor, fallback: str, catalog: int) -> torch.Tensor:
    return _matmul_call(a, b, fallback, catalog)


@_matmul_op.register_fake
def _matmul_fake(a, b, fallback, catalog):
    m, n, _, _ = _gemm_problem(a, b, fallback)
    return a.new_empty((m, n))


def attention(q, k, v, is_causal=False, scale=None, *, fallback="sdpa", catalog=None):
    """softmax(Q K^T * scale [causal, top-left aligned]) V, as
    torch.nn.functional.scaled_dot_product_attention, for [B, H, S, D] CUDA fp16/bf16 tensors.
    `catalog`: a swr.Catalog, None for the default (swr.default_catalog_path())."""
    if torch.compiler.is_compiling():  # the op, which the graph keeps
        return torch.ops.swr.attention(q, k, v, bool(is_causal), scale, fallback,
                                       _catalog_number(catalog))
    # Eagerly the same code without the dispatcher's cost.
    return _attention_call(q, k, v, bool(is_causal), scale, fallback, _catalog_number(catalog))


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


def explain(q, k, v, is_causal=False, scale=None, *, catalog=None):
    """What attention(q, k, v, ...) runs, without running it: {"runs": "swr" | "fallback",
    "match": exact | nearest | none, "variant", "distance", "tuned_shape", "measured" (the
    tuner's figures), "why_not_swr", "copies_inputs"}."""
    problem = _attention_problem(q, k, v, is_causal, scale, "sdpa")
    plan = _plan(_catalog_number(catalog), q.device.index, "attention", problem, scale, "explain")
    copies = not all(t.is_contiguous() for t in (q, k, v))
    return _explained(plan, copies)


def explain_matmul(a, b, *, catalog=None):
    """What matmul(a, b) runs, as explain() says it."""
    problem = _gemm_problem(a, b, "sdpa")
    plan = _plan(_catalog_number(catalog), a.device.index, "gemm", problem, None, "explain")
    return _explained(plan, not (a.is_contiguous() and b.is_contiguous()))
