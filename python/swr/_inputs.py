"""The rules a tensor call must meet before anything is looked up or launched, on plain values
(shapes as tuples, dtype and device names as strings), so that they hold for any tensor library
and are tested without one. Each failure is one ValueError or TypeError naming the value and
what is allowed."""
import math

FALLBACKS = ("sdpa", "error")
# The tensor dtype names a kernel takes, with the catalog's names for them.
DTYPES = {"float16": "f16", "bfloat16": "bf16"}


def check_fallback(fallback):
    if fallback not in FALLBACKS:
        raise ValueError(f"fallback={fallback!r}: allowed " + ", ".join(map(repr, FALLBACKS)))


def catalog_dtype(dtypes):
    """The catalog's dtype of tensors named {role: dtype name}: all one of DTYPES."""
    names = set(dtypes.values())
    if len(names) != 1:
        described = ", ".join(f"{role} {name}" for role, name in dtypes.items())
        raise TypeError(f"mismatched dtypes ({described}): allowed one dtype for all")
    name = names.pop()
    if name not in DTYPES:
        raise TypeError(f"dtype {name}: allowed " + ", ".join(DTYPES))
    return DTYPES[name]


def check_devices(devices):
    """{role: (type, index)}: all on one CUDA device."""
    for role, (kind, index) in devices.items():
        if kind != "cuda":
            raise ValueError(f"{role} is on device {kind}: allowed a CUDA tensor")
    if len(set(devices.values())) != 1:
        described = ", ".join(f"{role} cuda:{index}" for role, (_, index) in devices.items())
        raise ValueError(f"tensors on different devices ({described}): allowed one device")


def attention_shape(q_shape, k_shape, v_shape, enable_gqa=False):
    """(batch, heads, seq_q, seq_kv, head_dim, kv_heads) of [B, H, S, D] query, key and value. K
    and V may have fewer heads than Q only with enable_gqa (SDPA's rule), a divisor of them."""
    for role, shape in (("q", q_shape), ("k", k_shape), ("v", v_shape)):
        if len(shape) != 4:
            raise ValueError(f"{role} has shape {tuple(shape)}: allowed [batch, heads, seq, "
                             "head_dim] (4 dimensions)")
    if tuple(k_shape) != tuple(v_shape):
        raise ValueError(f"k shape {tuple(k_shape)} and v shape {tuple(v_shape)} differ: "
                         "allowed the same shape")
    if min(q_shape) <= 0 or min(k_shape) <= 0:
        raise ValueError(f"empty tensors (q {tuple(q_shape)}, k {tuple(k_shape)}): allowed "
                         "sizes of 1 or more")
    batch, heads, seq_q, head_dim = q_shape
    kv_heads = k_shape[1]
    if (k_shape[0], k_shape[3]) != (batch, head_dim):
        raise ValueError(f"q shape {tuple(q_shape)} and k shape {tuple(k_shape)}: allowed the "
                         "same batch and head_dim")
    if kv_heads != heads and not enable_gqa:
        raise ValueError(f"q has {heads} heads and k {kv_heads}: allowed the same heads, or "
                         "enable_gqa=True with k's heads a divisor of q's")
    if heads % kv_heads != 0:
        raise ValueError(f"q has {heads} heads and k {kv_heads}: allowed k heads that divide "
                         "q's (grouped-query attention)")
    return batch, heads, seq_q, k_shape[2], head_dim, kv_heads


def kernel_strides(shape, strides, pointer):
    """The element strides (batch, head, seq, dim) of a [B, H, S, D] tensor when the kernels read
    it as it lies (rows of whole 16-byte chunks: D stride 1, the other strides of dimensions
    longer than 1 multiples of 8 elements, a 16-byte aligned start, rows that do not overlap:
    the runtime's rule, runtime/attention_layout.cpp), else None: the tensor is copied first."""
    if strides[3] != 1 or pointer % 16:
        return None
    span = shape[3]
    for extent, stride in sorted(zip(shape[:3], strides[:3]), key=lambda pair: pair[1]):
        if extent == 1:
            continue
        if stride % 8 or stride < span:
            return None
        span += stride * (extent - 1)
    return tuple(strides)


def gemm_shape(a_shape, b_shape):
    """(m, n, k) of A [m, k] times B [k, n]."""
    if len(a_shape) != 2 or len(b_shape) != 2 or a_shape[1] != b_shape[0]:
        raise ValueError(f"a shape {tuple(a_shape)} and b shape {tuple(b_shape)}: allowed "
                         "[m, k] and [k, n] (2 dimensions, equal k)")
    return a_shape[0], b_shape[1], a_shape[1]


def scale_refusal(scale, head_dim):
    """Why the kernels cannot apply `scale` (they compute softmax(Q K^T / sqrt(head_dim))), or
    None when they can (scale None or 1/sqrt(head_dim) to float32 precision)."""
    if scale is None:
        return None
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale):
        raise TypeError(f"scale={scale!r}: allowed None or a finite number")
    kernel_scale = 1.0 / math.sqrt(head_dim)
    if abs(scale - kernel_scale) <= 1e-6 * kernel_scale:
        return None
    return (f"scale={scale!r}: the kernels apply 1/sqrt(head_dim) = {kernel_scale!r} only "
            "(allowed: None or that value)")


def shape_text(batch, heads, seq_q, seq_kv, head_dim, kv_heads, dtype, causal):
    """"B=16 H=8 Sq=777 Skv=777 D=64 f16 causal" ("H=32/8" for 8 K/V heads): how a warning names
    an attention shape."""
    heads_text = f"{heads}/{kv_heads}" if kv_heads != heads else f"{heads}"
    return (f"B={batch} H={heads_text} Sq={seq_q} Skv={seq_kv} D={head_dim} {dtype}"
            + (" causal" if causal else ""))
