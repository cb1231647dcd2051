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
host-device synchronisation. Eagerly the ops' dispatcher is skipped and the calls take the hot
path (swr/_hotpath.py), compiled where `pip install` could build it (`hot_path` says which;
SWR_HOT_PATH=python forces the Python one); under torch.compile they go through the custom ops,
which the graph keeps.

Layout: contiguous [B, H, S, D] tensors, and strided views whose rows the kernels read as they
lie (D stride 1, the other strides multiples of 8 elements, 16-byte aligned, rows not overlapping:
e.g. a [B, S, H, D] projection transposed to [B, H, S, D]), are passed without a copy; other
strides are copied to row-major first (explain() says `copies_inputs`). GEMM reads row-major
[m, k], [k, n]. A shape nothing tuned serves, or a scale other than 1/sqrt(D), follows
`fallback`: "sdpa" (the default) runs PyTorch's own operator with a warning, once per shape;
"error" raises swr.KernelRefused.

Training: a call that autograd records (grad mode on, an input that requires grad) is never
detached. attention then runs swr's forward that also writes each row's log-sum-exp, and records
a backward that launches the catalog's backward variant for the shape (exact, else nearest; under
torch.use_deterministic_algorithms(True) only a variant whose dQ is deterministic). swr runs the
pair where it serves both passes of the shape; otherwise the fallback policy covers the whole op,
forward and backward. Under torch.compile the pair is the op torch.ops.swr.attention_train and its
registered backward torch.ops.swr.attention_backward, which the graphs keep. matmul's op has a registered backward (dA = dC B^T, dB = A^T dC, each a
product swr runs where its shape is tuned). Under no_grad or inference mode nothing extra is
written.
"""
import contextlib
import ctypes
import os
import sys
import threading
import warnings
from typing import Optional

import torch

if not hasattr(torch.library, "custom_op"):
    raise ImportError(f"swr.torch needs torch 2.4 or newer (torch.library.custom_op); this is "
                      f"torch {torch.__version__}")

from . import _hotpath, _inputs  # noqa: E402
from ._native import KernelRefused  # noqa: E402
from .catalog import (Catalog, attention_strides, backward_strides, device_gpu_name,  # noqa: E402
                      numbered_catalog)

_default_catalog = None
_lock = threading.Lock()


def _catalog_number(catalog):
    """How an op names the catalog: 0 for the default, else Catalog.number."""
    if catalog is None:
        return 0
    if not isinstance(catalog, Catalog):
        raise TypeError(f"catalog={catalog!r}: allowed None (the default) or a swr.Catalog")
    return catalog.number


def _numbered_catalog(number):
    """The catalog an op's number names (None: the default)."""
    return None if number == 0 else numbered_catalog(number)


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
    backward = family in _BACKWARD_FAMILIES
    deterministic = family == _DETERMINISTIC_BACKWARD
    if family == "attention" or backward:
        batch, heads, seq_q, seq_kv, head_dim, kv_heads, dtype, causal = problem
        if backward:
            choice = catalog.best_attention_backward(gpu, batch, heads, seq_q, head_dim, dtype,
                                                     causal, seq_kv, kv_heads,
                                                     deterministic=deterministic)
            described = "the backward of " + _inputs.shape_text(*problem)
        else:
            choice = catalog.best_attention(gpu, batch, heads, seq_q, head_dim, dtype, causal,
                                            seq_kv, kv_heads)
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
            if backward:
                launch = catalog.attention_backward_launch(batch, heads, seq_q, head_dim, dtype,
                                                           causal, seq_kv, gpu, kv_heads,
                                                           deterministic=deterministic)
            elif family == "attention":
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
# The backward's families: any variant, or one whose dQ is the same bit for bit on every run
# (torch.use_deterministic_algorithms).
_DETERMINISTIC_BACKWARD = "attention-backward-deterministic"
_BACKWARD_FAMILIES = ("attention-backward", _DETERMINISTIC_BACKWARD)


def _decided_plan(catalog_number, device_index, family, problem, scale):
    """The plan of a problem, decided on its first call and remembered."""
    key = (catalog_number, device_index, family, problem, scale)
    plan = _plans.get(key)
    if plan is None:
        refusal = (_inputs.scale_refusal(scale, problem[4]) if family != "gemm" else None)
        catalog = _catalog(catalog_number)
        with _lock:  # one preparation per shape, however many threads ask at once
            plan = _plans.get(key)
            if plan is None:
                plan = _plans[key] = _decide(catalog, device_index, family, problem, refusal)
    return plan


def _plan(catalog_number, device_index, family, problem, scale, fallback):
    """The plan of a problem (_decided_plan); raises under fallback "error" when swr does not
    serve it, warns once per shape under "sdpa"."""
    key = (catalog_number, device_index, family, problem, scale)
    plan = _decided_plan(catalog_number, device_index, family, problem, scale)
    if plan.refusal is not None:
        if fallback == "error":
            raise KernelRefused(plan.refusal + " (fallback='error'; fallback='sdpa' runs "
                                "PyTorch's operator instead)")
        if fallback == "sdpa" and key not in _warned:
            _warned.add(key)
            peer = "scaled_dot_product_attention" if family == "attention" else "matmul"
            warnings.warn(f"swr: {plan.refusal}; running torch {peer} instead (warned once per "
                          "shape)", RuntimeWarning, stacklevel=_caller_outside_stacklevel())
    return plan


_PACKAGE_DIRECTORY = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _caller_outside_stacklevel():
    """The stacklevel that makes a warning of its caller name the nearest frame outside this
    package: the user's call, however many of swr's frames lie in between (the Python hot path
    has one more than the compiled one)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIRECTORY):
        frame, level = frame.f_back, level + 1
    return level


def _first_attention(hot, key, q, k, v, is_causal, scale, fallback, catalog, enable_gqa):
    """What runs calls like this one (swr's prepared launch through `hot`, or PyTorch's
    operator), once the checks pass (they raise otherwise), remembered under `key` for the calls
    that follow. A call whose checks raise (bad input, or a refusal under fallback="error") is not
    remembered, so it raises again; nor is one without a key or with a tensor as is_causal (whose
    key would never match). Strides join the key when the kernels take them."""
    number = _catalog_number(catalog)
    problem = _attention_problem(q, k, v, is_causal, scale, fallback, enable_gqa)
    plan = _plan(number, q.device.index, "attention", problem, scale, fallback)
    if plan.launch is not None:
        run = hot.attention_launch(plan.launch, plan.device_index, plan.dynamic_workspace)
    else:
        causal = problem[7]
        gqa = {"enable_gqa": True} if enable_gqa else {}  # torch >= 2.5 has it
        run = lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(  # noqa: E731
            q, k, v, is_causal=causal, scale=scale, **gqa)
    if key is not None and isinstance(is_causal, bool) and isinstance(enable_gqa, bool):
        hot.attention_runners[key] = run
    return run


def _first_matmul(hot, key, a, b, fallback, catalog):
    number = _catalog_number(catalog)
    problem = _gemm_problem(a, b, fallback)
    plan = _plan(number, a.device.index, "gemm", problem, None, fallback)
    if plan.launch is not None:
        run = hot.matmul_launch(plan.launch, plan.device_index, problem[:2])
    else:
        run = torch.matmul
    if key is not None:
        hot.matmul_runners[key] = run
    return run


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


def _capture_workspace(q):
    """A tile counter of a launch captured into a CUDA graph: the graph's memory."""
    return torch.empty(1, dtype=torch.int32, device=q.device)


def _strided_attention(runner, q, k, v):
    """A launch whose tensors are not all contiguous: the ones the kernels read as they lie are
    passed with their strides (swr_launch_attention_v2), the others copied to row-major first; the
    output takes q's layout when it is dense (empty_like). Called by the hot path on the launch's
    device."""
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
    workspace = 0
    if runner.dynamic:  # a counter of its own, cleared by swr on the stream
        workspace = torch.empty(1, dtype=torch.int32, device=q.device).data_ptr()
    launch = runner.launch
    status = launch.strided_function(launch.handle, q.data_ptr(), k.data_ptr(), v.data_ptr(),
                                     out.data_ptr(), ctypes.byref(layout), workspace, 0,
                                     _raw_stream(runner.device_index))
    if status:
        launch.fail(status)
    return out


def _on_device(index, run, *tensors):
    with torch.cuda.device(index):
        return run(*tensors)


def _wants_grad(*tensors):
    """Whether autograd records a call on `tensors`: grad mode is on (not no_grad, not inference
    mode) and one of them requires grad."""
    return torch.is_grad_enabled() and any(
        isinstance(tensor, torch.Tensor) and tensor.requires_grad for tensor in tensors)


def _backward_family(deterministic):
    return _DETERMINISTIC_BACKWARD if deterministic else "attention-backward"


def _training_plans(number, device_index, problem, scale, deterministic):
    """The forward's and the backward's plans of a call that autograd records, and why swr cannot
    serve the pair (None when it serves both: the forward then writes the log-sum-exp the
    backward reads)."""
    forward = _decided_plan(number, device_index, "attention", problem, scale)
    backward = _decided_plan(number, device_index, _backward_family(deterministic), problem,
                             scale)
    refusal = forward.refusal or backward.refusal
    if refusal is not None and deterministic and backward.refusal is not None:
        refusal += " (torch.use_deterministic_algorithms(True) asks for a deterministic dQ)"
    return forward, backward, refusal


def _training_fallback(refusal, fallback, key):
    """The fallback policy for the whole op of a call autograd records: raise ("error") or warn
    once per shape ("sdpa")."""
    if fallback == "error":
        raise KernelRefused(f"{refusal} (inputs require grad; fallback='error'; fallback='sdpa' "
                            "runs PyTorch's operator for forward and backward)")
    if key not in _warned:
        _warned.add(key)
        warnings.warn(f"swr: {refusal}; inputs require grad: running torch "
                      "scaled_dot_product_attention for forward and backward instead (warned "
                      "once per shape)", RuntimeWarning, stacklevel=_caller_outside_stacklevel())


def _sdpa(q, k, v, causal, scale, enable_gqa):
    gqa = {"enable_gqa": True} if enable_gqa else {}  # torch >= 2.5 has it
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                            scale=scale, **gqa)


def _kernel_view(tensor):
    """`tensor` and its (batch, head, seq, dim) strides as the kernels read it: as it lies when
    they can, else a row-major copy."""
    taken = _inputs.kernel_strides(tuple(tensor.shape), tensor.stride(), tensor.data_ptr())
    if taken is None:
        tensor = tensor.contiguous()
        taken = tensor.stride()
    return tensor, tuple(taken)


def _lse_shape(q):
    return (q.shape[0], q.shape[1], q.shape[2])


def _training_refusal(number, device_index, problem, scale):
    """(why swr cannot serve both passes of `problem` or None, whether the backward must be
    deterministic): what a call under autograd runs, decided on the first call of a shape."""
    deterministic = torch.are_deterministic_algorithms_enabled()
    return _training_plans(number, device_index, problem, scale, deterministic)[2], deterministic


# While torch.compile traces, the decision is made once and kept in the graph as a constant, as
# the catalog's answers are for a shape (the op's implementation holds the remembered plans).
_traced_training_refusal = torch._dynamo.assume_constant_result(_training_refusal)


def _on_launch_device(index):
    """The launches' device made current while they are enqueued: a no-op when it is already
    (the common case, and the cheap one: entering torch.cuda.device costs more than a launch)."""
    return contextlib.nullcontext() if _current_device() == index else torch.cuda.device(index)


class _TrainingCall:
    """What a call that autograd records runs when swr serves both its passes: the forward that
    also writes each row's log-sum-exp, and the backward that reads it. One definition of the
    launches for the eager path (_AttentionTraining) and the ops that torch.compile keeps."""

    __slots__ = ("forward", "backward", "device_index")

    def __init__(self, forward, backward, device_index):
        self.forward, self.backward, self.device_index = forward, backward, device_index

    def run_forward(self, q, k, v):
        """(out, lse [B, H, S_q] fp32), both row-major."""
        index = self.device_index
        lse = torch.empty(_lse_shape(q), dtype=torch.float32, device=q.device)
        with _on_launch_device(index):
            (q, q_strides), (k, k_strides), (v, v_strides) = (_kernel_view(t) for t in (q, k, v))
            out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
            layout = attention_strides(q_strides, k_strides, v_strides, out.stride())
            workspace = 0
            if self.forward.dynamic_workspace:  # a counter of its own, cleared by swr on the stream
                workspace = torch.empty(1, dtype=torch.int32, device=q.device).data_ptr()
            self.forward.launch.call_with_lse(q.data_ptr(), k.data_ptr(), v.data_ptr(),
                                              out.data_ptr(), lse.data_ptr(), layout, workspace,
                                              0, _raw_stream(index))
        return out, lse

    def run_backward(self, grad, q, k, v, out, lse):
        """(dq, dk, dv), row-major, given the gradient of run_forward's out."""
        index = self.device_index
        with _on_launch_device(index):
            views = {name: _kernel_view(t) for name, t in
                     (("q", q), ("k", k), ("v", v), ("o", out), ("d_o", grad))}
            dq = torch.empty(q.shape, dtype=q.dtype, device=q.device)
            dk = torch.empty(k.shape, dtype=k.dtype, device=k.device)
            dv = torch.empty(v.shape, dtype=v.dtype, device=v.device)
            launch = self.backward.launch
            workspace = torch.empty(launch.workspace_bytes, dtype=torch.uint8, device=q.device)
            strides = backward_strides(**{name: taken for name, (_, taken) in views.items()},
                                       dq=dq.stride(), dk=dk.stride(), dv=dv.stride())
            q, k, v, out, grad = (views[name][0] for name in ("q", "k", "v", "o", "d_o"))
            launch(q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), grad.data_ptr(),
                   lse.contiguous().data_ptr(), dq.data_ptr(), dk.data_ptr(), dv.data_ptr(),
                   workspace=workspace.data_ptr(), strides=strides, stream=_raw_stream(index))
        return dq, dk, dv


def _training_call(q, k, v, is_causal, scale, fallback, catalog, enable_gqa, deterministic):
    """The _TrainingCall of the ops' arguments (the plans the first call of the shape decided)."""
    problem = _attention_problem(q, k, v, is_causal, scale, fallback, enable_gqa)
    device_index = q.device.index
    forward, backward, refusal = _training_plans(catalog, device_index, problem, scale,
                                                 deterministic)
    if refusal is not None:  # attention() decided otherwise: a catalog replaced meanwhile
        raise KernelRefused(refusal)
    return _TrainingCall(forward, backward, device_index)


class _AttentionTraining(torch.autograd.Function):
    """attention() under autograd, eagerly: a _TrainingCall's forward, and its backward as the
    graph's. The same launches as the ops torch.compile keeps (torch.ops.swr.attention_train and
    attention_backward), without their dispatch, which costs more on the host than the kernels
    take on the GPU at training shapes."""

    @staticmethod
    def forward(ctx, q, k, v, call):
        out, lse = call.run_forward(q, k, v)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.call = call
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        return (*ctx.call.run_backward(grad, *ctx.saved_tensors), None)


# Eager calls under autograd by their key (_attention_with_grad): the _TrainingCall that runs
# them, or None where the fallback covers the whole op (warned once already).
_training_calls = {}


def _attention_with_grad(q, k, v, is_causal, scale, enable_gqa, fallback, catalog):
    """attention() when autograd records the call: never a detached result. Where swr serves
    both passes of the shape (a deterministic backward under torch.use_deterministic_algorithms),
    its forward writes the log-sum-exp and its backward launches the backward variant: eagerly
    through _AttentionTraining, under torch.compile as the op pair the graphs keep. Otherwise the
    fallback policy covers the whole op."""
    if torch.compiler.is_compiling():
        return _traced_attention_with_grad(q, k, v, is_causal, scale, enable_gqa, fallback,
                                           catalog)
    deterministic = torch.are_deterministic_algorithms_enabled()
    try:
        key = (q.shape, k.shape, v.shape, q.dtype, k.dtype, v.dtype, q.device, k.device,
               v.device, is_causal, scale, fallback, catalog, enable_gqa, deterministic)
        call = _training_calls[key]
    except KeyError:  # the first call like this one
        call = _first_training_call(key, q, k, v, is_causal, scale, enable_gqa, fallback,
                                    catalog, deterministic)
    except (AttributeError, TypeError):  # not a tensor, or an unhashable argument
        call = _first_training_call(None, q, k, v, is_causal, scale, enable_gqa, fallback,
                                    catalog, deterministic)
    if call is None:
        return _sdpa(q, k, v, bool(is_causal), scale, enable_gqa)
    return _AttentionTraining.apply(q, k, v, call)


def _first_training_call(key, q, k, v, is_causal, scale, enable_gqa, fallback, catalog,
                         deterministic):
    """The _TrainingCall of the first eager call of `key` (None: the fallback covers the whole
    op), remembered unless the call raised (a refusal under fallback="error" raises every time)."""
    number = _catalog_number(catalog)
    problem = _attention_problem(q, k, v, is_causal, scale, fallback, enable_gqa)
    device_index = q.device.index
    forward, backward, refusal = _training_plans(number, device_index, problem, scale,
                                                 deterministic)
    call = None
    if refusal is None:
        call = _TrainingCall(forward, backward, device_index)
    else:
        _training_fallback(refusal, fallback,
                           (number, device_index, "training", problem, scale, deterministic))
    if key is not None and isinstance(is_causal, bool) and isinstance(enable_gqa, bool):
        _training_calls[key] = call
    return call


def _traced_attention_with_grad(q, k, v, is_causal, scale, enable_gqa, fallback, catalog):
    """_attention_with_grad while torch.compile traces: the decision a constant of the graph,
    swr's work the op pair."""
    number = _catalog_number(catalog)
    problem = _attention_problem(q, k, v, is_causal, scale, fallback, enable_gqa)
    refusal, deterministic = _traced_training_refusal(number, q.device.index, problem, scale)
    if refusal is not None:
        if fallback == "error":
            raise KernelRefused(f"{refusal} (inputs require grad; fallback='error')")
        return _sdpa(q, k, v, problem[7], scale, enable_gqa)
    out, _ = torch.ops.swr.attention_train(q, k, v, bool(is_causal), scale, fallback, number,
                                           bool(enable_gqa), deterministic)
    return out


def _matmul_backward_products(a, b):
    """{"grad_a": (m, k, n), "grad_b": (k, n, m)}: the (m, n, k) GEMM problems of dA = dC B^T and
    dB = A^T dC for the inputs that require grad."""
    m, k = a.shape
    n = b.shape[1]
    products = {}
    if a.requires_grad:
        products["grad_a"] = (m, k, n)
    if b.requires_grad:
        products["grad_b"] = (k, n, m)
    return products


def _check_matmul_backward_served(a, b, fallback, catalog):
    """Under fallback "error", refuses before the forward runs a product whose backward swr does
    not serve (the backward would refuse it later, after the forward's work)."""
    _, _, _, dtype = _gemm_problem(a, b, fallback)
    if fallback != "error":
        return
    number = _catalog_number(catalog)
    for name, (m, n, k) in _matmul_backward_products(a, b).items():
        _plan(number, a.device.index, "gemm", (m, n, k, dtype), None, fallback)


_hot_paths = {}  # HotPath class -> the one over PyTorch, made once (it keeps its runners)


def _use_hot_path(setting):
    """Makes eager calls go through the hot path (swr/_hotpath.py) that `setting` names
    ("compiled", "python", or None for what $SWR_HOT_PATH says; the benchmark alternates them in
    one process) and returns it."""
    global _hot, _eager_attention, _eager_matmul, hot_path
    kind = _hotpath.choose(setting)
    if kind not in _hot_paths:
        _hot_paths[kind] = kind(
            empty_like=torch.empty_like, current_device=_current_device, raw_stream=_raw_stream,
            capturing=_capturing, capture_workspace=_capture_workspace, on_device=_on_device,
            strided_attention=_strided_attention, first_attention=_first_attention,
            first_matmul=_first_matmul)
    _hot = _hot_paths[kind]
    _eager_attention, _eager_matmul, hot_path = _hot.attention, _hot.matmul, _hot.kind
    return _hot


_hot = _eager_attention = _eager_matmul = None
hot_path = None  # "compiled" (swr._hotpath_ext) or "python": what runs eager calls
_use_hot_path(None)


def attention(q, k, v, is_causal=False, scale=None, enable_gqa=False, *, fallback="sdpa",
              catalog=None):
    """softmax(Q K^T * scale [causal, top-left aligned]) V, as
    torch.nn.functional.scaled_dot_product_attention, for [B, H, S, D] CUDA fp16/bf16 tensors;
    enable_gqa=True, as SDPA's, lets K and V have fewer heads (a divisor of Q's: grouped-query
    attention, each K/V head serving consecutive query heads). `catalog`: a swr.Catalog, None for
    the default (swr.default_catalog_path()).

    When autograd records the call (grad mode on and an input that requires grad), the result is
    never detached: swr serves the call only where it also serves its backward; otherwise the
    `fallback` policy applies to the whole op ("sdpa": PyTorch's operator for forward and
    backward, warned once per shape; "error": swr.KernelRefused naming why)."""
    if _wants_grad(q, k, v):
        return _attention_with_grad(q, k, v, is_causal, scale, enable_gqa, fallback, catalog)
    if torch.compiler.is_compiling():  # the op, which the graph keeps
        return torch.ops.swr.attention(q, k, v, bool(is_causal), scale, fallback,
                                       _catalog_number(catalog), bool(enable_gqa))
    # Eagerly (and as the op's implementation): the hot path.
    return _eager_attention(q, k, v, is_causal, scale, fallback, catalog, enable_gqa)


def matmul(a, b, *, fallback="sdpa", catalog=None):
    """a @ b for 2-D CUDA fp16/bf16 tensors [m, k] and [k, n]. fallback "sdpa" (the same word
    for every op: PyTorch's own operator, here torch.matmul) or "error".

    Under autograd the op's backward computes dA = dC B^T and dB = A^T dC, each a product of its
    own shape that swr runs where the catalog serves it and the fallback policy decides
    otherwise (explain_matmul says which)."""
    if _wants_grad(a, b):
        if not torch.compiler.is_compiling():
            _check_matmul_backward_served(a, b, fallback, catalog)
        return torch.ops.swr.matmul(a, b, fallback, _catalog_number(catalog))
    if torch.compiler.is_compiling():
        return torch.ops.swr.matmul(a, b, fallback, _catalog_number(catalog))
    return _eager_matmul(a, b, fallback, catalog)


@torch.library.custom_op("swr::attention", mutates_args=())
def _attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, is_causal: bool,
                  scale: Optional[float], fallback: str, catalog: int,
                  enable_gqa: bool) -> torch.Tensor:
    return _eager_attention(q, k, v, is_causal, scale, fallback, _numbered_catalog(catalog),
                            enable_gqa)


@_attention_op.register_fake
def _attention_fake(q, k, v, is_causal, scale, fallback, catalog, enable_gqa):
    _attention_problem(q, k, v, is_causal, scale, fallback, enable_gqa)
    return q.new_empty(q.shape)


@torch.library.custom_op("swr::attention_train", mutates_args=())
def _attention_train_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, is_causal: bool,
                        scale: Optional[float], fallback: str, catalog: int, enable_gqa: bool,
                        deterministic: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(out, lse [B, H, S_q] fp32): attention's forward that the backward op needs."""
    return _training_call(q, k, v, is_causal, scale, fallback, catalog, enable_gqa,
                          deterministic).run_forward(q, k, v)


@_attention_train_op.register_fake
def _attention_train_fake(q, k, v, is_causal, scale, fallback, catalog, enable_gqa,
                          deterministic):
    _attention_problem(q, k, v, is_causal, scale, fallback, enable_gqa)
    return q.new_empty(q.shape), q.new_empty(_lse_shape(q), dtype=torch.float32)


@torch.library.custom_op("swr::attention_backward", mutates_args=())
def _attention_backward_op(grad: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                           v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor,
                           is_causal: bool, scale: Optional[float], fallback: str, catalog: int,
                           enable_gqa: bool, deterministic: bool
                           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dq, dk, dv) of attention_train's out, given its gradient `grad`."""
    return _training_call(q, k, v, is_causal, scale, fallback, catalog, enable_gqa,
                          deterministic).run_backward(grad, q, k, v, out, lse)


@_attention_backward_op.register_fake
def _attention_backward_fake(grad, q, k, v, out, lse, is_causal, scale, fallback, catalog,
                             enable_gqa, deterministic):
    _attention_problem(q, k, v, is_causal, scale, fallback, enable_gqa)
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _attention_train_setup_context(ctx, inputs, output):
    q, k, v, is_causal, scale, fallback, catalog, enable_gqa, deterministic = inputs
    out, lse = output
    ctx.mark_non_differentiable(lse)
    ctx.save_for_backward(q, k, v, out, lse)
    ctx.options = (is_causal, scale, fallback, catalog, enable_gqa, deterministic)


def _attention_train_backward(ctx, grad, grad_lse):
    q, k, v, out, lse = ctx.saved_tensors
    dq, dk, dv = torch.ops.swr.attention_backward(grad.contiguous(), q, k, v, out, lse,
                                                  *ctx.options)
    return dq, dk, dv, None, None, None, None, None, None


_attention_train_op.register_autograd(_attention_train_backward,
                                      setup_context=_attention_train_setup_context)


@torch.library.custom_op("swr::matmul", mutates_args=())
def _matmul_op(a: torch.Tensor, b: torch.Tensor, fallback: str, catalog: int) -> torch.Tensor:
    # Autograd runs this with inputs that may require grad: straight to the eager path.
    return _eager_matmul(a, b, fallback, _numbered_catalog(catalog))


@_matmul_op.register_fake
def _matmul_fake(a, b, fallback, catalog):
    m, n, _, _ = _gemm_problem(a, b, fallback)
    return a.new_empty((m, n))


def _matmul_setup_context(ctx, inputs, output):
    a, b, fallback, catalog = inputs
    ctx.save_for_backward(a if b.requires_grad else None, b if a.requires_grad else None)
    ctx.fallback, ctx.catalog = fallback, catalog


def _matmul_backward(ctx, grad):
    """dA = dC B^T and dB = A^T dC, each through matmul(): swr where the catalog serves its shape
    (the transposed operand is copied to row-major first), else the fallback policy."""
    a, b = ctx.saved_tensors
    catalog = _numbered_catalog(ctx.catalog)
    grad_a = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_a = matmul(grad, b.t(), fallback=ctx.fallback, catalog=catalog)
    if ctx.needs_input_grad[1]:
        grad_b = matmul(a.t(), grad, fallback=ctx.fallback, catalog=catalog)
    return grad_a, grad_b, None, None


_matmul_op.register_autograd(_matmul_backward, setup_context=_matmul_setup_context)


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
    lies is copied first), "backward": the same of the backward variant, with "deterministic"
    (torch.are_deterministic_algorithms_enabled()): what a call that autograd records runs for
    the backward; "runs" is "swr" only where swr serves both passes (else both fall back)}."""
    problem = _attention_problem(q, k, v, is_causal, scale, "sdpa", bool(enable_gqa))
    plan = _plan(_catalog_number(catalog), q.device.index, "attention", problem, scale, "explain")
    copies = not all(t.is_contiguous() or _inputs.kernel_strides(tuple(t.shape), t.stride(),
                                                                 t.data_ptr()) is not None
                     for t in (q, k, v))
    answer = _explained(plan, copies)
    deterministic = torch.are_deterministic_algorithms_enabled()
    _, backward, refusal = _training_plans(_catalog_number(catalog), q.device.index, problem,
                                           scale, deterministic)
    answer["backward"] = dict(_explained(backward, copies), deterministic=deterministic)
    answer["backward"]["runs"] = "swr" if refusal is None else "fallback"
    if refusal is not None:
        answer["backward"]["why_not_swr"] = refusal
    return answer


def explain_matmul(a, b, *, catalog=None):
    """What matmul(a, b) runs, as explain() says it, with "backward": {"grad_a", "grad_b"}: what
    each product of the backward runs (dA = dC B^T of shape m x k, dB = A^T dC of k x n), as
    explain() says it, with its "shape"."""
    problem = _gemm_problem(a, b, "sdpa")
    number = _catalog_number(catalog)
    plan = _plan(number, a.device.index, "gemm", problem, None, "explain")
    answer = _explained(plan, not (a.is_contiguous() and b.is_contiguous()))
    m, n, k, dtype = problem
    answer["backward"] = {}
    for name, (pm, pn, pk) in (("grad_a", (m, k, n)), ("grad_b", (k, n, m))):
        product = _plan(number, a.device.index, "gemm", (pm, pn, pk, dtype), None, "explain")
        answer["backward"][name] = dict(_explained(product, True), shape=f"m={pm} n={pn} k={pk}")
    return answer
