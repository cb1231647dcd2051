"""A stand-in for the few parts of PyTorch and of the swr runtime that bench/peer_grid.py uses, so
that its GPU path (choose, check, time, record) runs end to end on a machine without either.
Tensors hold one number each (every element the same): enough to check that outputs are compared
and written where they should be, not to compute attention.

install() puts the fake modules in sys.modules; FakeCatalog stands in for swr.Catalog and
FakeSwrTorch for swr.torch (which launches through the catalog's runtime).
"""
import enum
import math
import sys
import time
import types

float16, bfloat16, float32, int32 = "float16", "bfloat16", "float32", "int32"
_tensors = {}  # data_ptr -> tensor, so that the fake driver can find what a kernel writes


class Tensor:
    _next_pointer = 0x1000

    def __init__(self, shape, value, dtype):
        self.shape, self.value, self.dtype = tuple(shape), value, dtype
        Tensor._next_pointer += 0x1000
        self.pointer = Tensor._next_pointer
        _tensors[self.pointer] = self

    def data_ptr(self):
        return self.pointer

    def float(self):
        return Tensor(self.shape, self.value, float32)

    def __sub__(self, other):
        return Tensor(self.shape, self.value - other.value, self.dtype)

    def __truediv__(self, other):
        return Tensor((), self.value / other.value, self.dtype)

    def norm(self):
        return Tensor((), abs(self.value) * math.sqrt(math.prod(self.shape) or 1), self.dtype)

    def item(self):
        return self.value

    def zero_(self):
        self.value = 0.0
        return self

    def repeat_interleave(self, repeats, dim):
        shape = list(self.shape)
        shape[dim] *= repeats
        return Tensor(shape, self.value, self.dtype)


def randn(*shape, device=None, dtype=float32):
    return Tensor(shape, 1.0, dtype)


def randn_like(tensor):
    return Tensor(tensor.shape, 1.0, tensor.dtype)


def full_like(tensor, value):
    return Tensor(tensor.shape, value, tensor.dtype)


def zeros(*shape, dtype=float32, device=None):
    return Tensor(shape, 0.0, dtype)


def empty(*shape, dtype=float32, device=None):
    return Tensor(shape, 0.0, dtype)


def matmul(a, b):
    return Tensor((a.shape[0], b.shape[1]), a.value * b.value * a.shape[1], a.dtype)


def manual_seed(seed):
    pass


class Event:
    def __init__(self, enable_timing=False):
        self.at = None

    def record(self):
        self.at = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return (end.at - self.at) * 1e3 + 0.01


class _Properties:
    name = "Fake H200"
    multi_processor_count = 132
    L2_cache_size = 1 << 20
    major, minor = 9, 0
    total_memory = 141 << 30


class SDPBackend(enum.Enum):
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    MATH = 3  # no CUDNN_ATTENTION: an older PyTorch, so that "missing" is exercised


_backend = [None]


class sdpa_kernel:
    def __init__(self, backend):
        self.backend = backend

    def __enter__(self):
        _backend[0] = self.backend

    def __exit__(self, *exc):
        _backend[0] = None


def scaled_dot_product_attention(q, k, v, is_causal=False, enable_gqa=False):
    if _backend[0] == SDPBackend.EFFICIENT_ATTENTION and q.shape[-1] > 128:
        raise RuntimeError("No available kernel. Aborting execution.")
    if k.shape[1] != q.shape[1] and not enable_gqa:
        raise RuntimeError("The size of tensor a must match the size of tensor b at dimension 1")
    # The fake efficient kernel takes no enable_gqa, as some real backends do not.
    if enable_gqa and _backend[0] == SDPBackend.EFFICIENT_ATTENTION:
        raise RuntimeError("No available kernel. Aborting execution.")
    return Tensor(q.shape, 1.0, q.dtype)


class FakeCatalog:
    """swr.Catalog without libswr_runtime.so: answers in the C API's form (`swr-tune query --json`)
    from `tuned` ({problem key: (config key, measured)}): exact for a tuned key, nearest for
    another with what is compiled into a kernel in common (the key's suffix after the shape),
    none otherwise. A run writes the expected output where the kernel would."""

    description = "export /fake-export"

    def __init__(self, tuned):
        self.tuned = tuned
        self.runs = []

    def _answer(self, family, key, compiled_part):
        asked = {"family": family, "key": key}
        same = sorted(k for k in self.tuned if k.endswith(compiled_part))
        if not same:
            return {"family": family, "asked": asked, "match": "none",
                    "why": f"nothing tuned with {compiled_part}", "gpu": "h200"}
        tuned_key = key if key in self.tuned else same[0]
        config_key, measured = self.tuned[tuned_key]
        return {"family": family, "asked": asked, "gpu": "h200", "source": self.description,
                "match": "exact" if tuned_key == key else "nearest",
                "distance": 0.0 if tuned_key == key else 1.0, "tuned_shape": tuned_key,
                "kernel": {"gpu": {"name": "h200"}, "config_key": config_key,
                           "measured": dict(measured)}}

    def best_attention(self, gpu, batch, heads, seq_q, head_dim, dtype="f16", causal=False,
                       seq_kv=None, kv_heads=0, causal_align="top_left"):
        compiled_part = f"_d{head_dim}_{dtype}_{'causal' if causal else 'noncausal'}"
        seq_kv = seq_q if seq_kv is None else seq_kv
        kv = f"_kv{kv_heads}" if kv_heads and kv_heads != heads else ""
        return self._answer("attention",
                            f"b{batch}_h{heads}{kv}_sq{seq_q}_skv{seq_kv}{compiled_part}",
                            compiled_part)

    def best_gemm(self, gpu, m, n, k, dtype="f16"):
        return self._answer("gemm", f"m{m}_n{n}_k{k}_{dtype}", f"_{dtype}")

    def run_attention(self, q, k, v, o, batch, heads, seq_q, head_dim, dtype="f16", causal=False,
                      seq_kv=None, stream=0, gpu=None, workspace=0, kv_heads=0):
        self.runs.append(("attention", gpu, stream))
        _tensors[o].value = 1.0

    def run_gemm(self, a, b, c, m, n, k, dtype="f16", stream=0, gpu=None):
        self.runs.append(("gemm", gpu, stream))
        _tensors[c].value = _tensors[a].value * _tensors[b].value * k


class FakeSwrTorch:
    """swr.torch on fake tensors: the calls launch through the catalog on device "h200"."""

    @staticmethod
    def explain(q, k, v, is_causal=False, enable_gqa=False, catalog=None):
        return {"runs": "swr", "gpu": "h200"}

    @staticmethod
    def explain_matmul(a, b, catalog=None):
        return {"runs": "swr", "gpu": "h200"}

    @staticmethod
    def attention(q, k, v, is_causal=False, fallback="sdpa", catalog=None, enable_gqa=False):
        if k.shape[1] != q.shape[1] and not enable_gqa:
            raise ValueError("grouped K/V heads need enable_gqa=True")
        out = Tensor(q.shape, float("nan"), q.dtype)
        catalog.run_attention(q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                              *q.shape[:3], q.shape[3], causal=is_causal, gpu="h200",
                              kv_heads=k.shape[1])
        return out

    @staticmethod
    def matmul(a, b, fallback="sdpa", catalog=None):
        c = Tensor((a.shape[0], b.shape[1]), float("nan"), a.dtype)
        catalog.run_gemm(a.data_ptr(), b.data_ptr(), c.data_ptr(), a.shape[0], b.shape[1],
                         a.shape[1], gpu="h200")
        return c


def install():
    torch = types.ModuleType("torch")
    for name in ("float16", "bfloat16", "float32", "int32", "randn", "randn_like", "full_like",
                 "zeros", "empty", "matmul", "manual_seed"):
        setattr(torch, name, globals()[name])
    torch.__version__ = "0.0-fake"
    torch.version = types.SimpleNamespace(cuda="13.0")
    torch.backends = types.SimpleNamespace(cudnn=types.SimpleNamespace(
        is_available=lambda: True, version=lambda: 91900))
    torch.cuda = types.SimpleNamespace(
        Event=Event, synchronize=lambda: None, empty_cache=lambda: None,
        get_device_properties=lambda index: _Properties(),
        mem_get_info=lambda: (100 << 30, 141 << 30),
        current_stream=lambda: types.SimpleNamespace(cuda_stream=0),
        profiler=types.SimpleNamespace(start=lambda: None, stop=lambda: None))
    nn = types.ModuleType("torch.nn")
    functional = types.ModuleType("torch.nn.functional")
    functional.scaled_dot_product_attention = scaled_dot_product_attention
    attention = types.ModuleType("torch.nn.attention")
    attention.SDPBackend, attention.sdpa_kernel = SDPBackend, sdpa_kernel
    torch.nn, nn.functional, nn.attention = nn, functional, attention
    sys.modules.update({"torch": torch, "torch.nn": nn, "torch.nn.functional": functional,
                        "torch.nn.attention": attention})
    return torch
