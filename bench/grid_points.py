"""The shapes the peer grid measures, grouped in regimes.

Three attention regimes:
  short: the TiledAttention paper's study grid (S 512..8192, D 64/96/128/160, fp16/bf16, causal and
         not). Its B=1, H=8 leaves an H200 mostly idle at S=512 (32 CTAs of 128 rows), so here every
         point has the same number of tokens, B*S = 16384, with H = 16: the short points all fill
         the GPU and each costs about the same time.
  long:  the Sawtooth paper's long-sequence regime (S 16K..256K, B=8, H=1, fp16), where K/V of one
         head outgrows the L2 and the K/V order matters; the shapes of bench/l2_sweep.sh.
  models: what models run: a Llama-3-like grouped-query shape (H=32 over H_kv=8 K/V heads, D=128)
         and head dim 256 (H=16), S 4K..64K with B*S = 65536, fp16, causal and not.
and one GEMM regime (square sizes, cuBLAS against swr's GEMM kernels when there are any).
Pure Python: no torch, so that the plan can be printed and tested anywhere.
"""
from dataclasses import dataclass

SHORT_SEQS = (512, 1024, 2048, 4096, 8192)
SHORT_HEAD_DIMS = (64, 96, 128, 160)
SHORT_TOKENS = 16384  # B*S of every short point
SHORT_HEADS = 16
LONG_SEQS = (16384, 32768, 65536, 131072, 262144)
LONG_HEAD_DIMS = (64, 128)
LONG_BATCH = 8
LONG_HEADS = 1
DTYPES = ("f16", "bf16")
GEMM_SIZES = (1024, 2048, 4096, 8192)

MODEL_SEQS = (4096, 16384, 65536)
MODEL_TOKENS = 65536  # B*S of every model point
# (heads, K/V heads, head dim): Llama-3 8B/70B's attention, and the largest head dim.
MODEL_SHAPES = ((32, 8, 128), (16, 16, 256))

# What swr's attention template instantiates (include/swr/attention_problem.hpp).
SWR_HEAD_DIMS = (32, 64, 80, 96, 128, 160, 192, 256)

REGIME_TITLES = {
    "short": "TiledAttention grid: S 512-8192, B*S=16384, H=16",
    "long": "Sawtooth long sequences: S 16K-256K, B=8, H=1",
    "models": "Model shapes: GQA H=32/H_kv=8 D=128 and D=256 H=16, S 4K-64K, B*S=65536",
    "gemm": "GEMM: square M=N=K",
    "points": "The points named with --points",
}


@dataclass(frozen=True)
class AttentionPoint:
    regime: str
    batch: int
    heads: int
    seq: int
    head_dim: int
    dtype: str  # "f16" or "bf16"
    causal: bool
    kv_heads: int = 0  # K/V heads; 0: heads (multi-head)

    family = "attention"

    def kv_head_count(self):
        return self.kv_heads or self.heads

    def grouped(self):
        """K/V heads fewer than the query heads (GQA/MQA: SDPA's enable_gqa)."""
        return self.kv_head_count() != self.heads

    def key(self):
        """swr's problem key (AttentionProblem::key), so that database rows match by text."""
        mask = "causal" if self.causal else "noncausal"
        kv = f"_kv{self.kv_head_count()}" if self.grouped() else ""
        return (f"b{self.batch}_h{self.heads}{kv}_sq{self.seq}_skv{self.seq}_d{self.head_dim}_"
                f"{self.dtype}_{mask}")

    def flops(self):
        """FlashAttention's convention: 4*B*H*S^2*D, halved for causal."""
        return 4.0 * self.batch * self.heads * self.seq * self.seq * self.head_dim * (
            0.5 if self.causal else 1.0)

    def tokens(self):
        """B*H*S, the TiledAttention paper's throughput unit (tokens/s)."""
        return self.batch * self.heads * self.seq

    def swr_supported(self):
        return self.head_dim in SWR_HEAD_DIMS

    def compiled_part(self):
        """What a cubin fixes (generator/kernel_source.cpp): the rest is a launch argument."""
        return (self.head_dim, self.dtype, self.causal)

    def describe(self):
        heads = f"H{self.heads}/{self.kv_head_count()}" if self.grouped() else f"H{self.heads}"
        return (f"B{self.batch} {heads} S{self.seq} D{self.head_dim} {self.dtype}"
                f"{' causal' if self.causal else ''}")

    def as_json(self):
        return {"family": self.family, "regime": self.regime, "key": self.key(),
                "batch": self.batch, "heads": self.heads, "kv_heads": self.kv_head_count(),
                "seq": self.seq, "head_dim": self.head_dim, "dtype": self.dtype,
                "causal": self.causal, "flops": self.flops(), "tokens": self.tokens()}


@dataclass(frozen=True)
class GemmPoint:
    m: int
    n: int
    k: int
    dtype: str

    family = "gemm"
    regime = "gemm"

    def key(self):
        return f"m{self.m}_n{self.n}_k{self.k}_{self.dtype}"

    def flops(self):
        return 2.0 * self.m * self.n * self.k

    def describe(self):
        return f"GEMM {self.m}x{self.n}x{self.k} {self.dtype}"

    def as_json(self):
        return {"family": self.family, "regime": self.regime, "key": self.key(), "m": self.m,
                "n": self.n, "k": self.k, "dtype": self.dtype, "flops": self.flops()}


def short_grid(seqs=SHORT_SEQS, head_dims=SHORT_HEAD_DIMS, dtypes=DTYPES):
    points = []
    for dtype in dtypes:
        for causal in (False, True):
            for head_dim in head_dims:
                for seq in seqs:
                    batch = max(1, SHORT_TOKENS // seq)
                    points.append(AttentionPoint("short", batch, SHORT_HEADS, seq, head_dim, dtype,
                                                 causal))
    return points


def long_grid(seqs=LONG_SEQS, head_dims=LONG_HEAD_DIMS):
    return [AttentionPoint("long", LONG_BATCH, LONG_HEADS, seq, head_dim, "f16", causal)
            for causal in (False, True) for head_dim in head_dims for seq in seqs]


def model_grid(seqs=MODEL_SEQS, shapes=MODEL_SHAPES):
    return [AttentionPoint("models", max(1, MODEL_TOKENS // seq), heads, seq, head_dim, "f16",
                           causal, kv_heads)
            for heads, kv_heads, head_dim in shapes for causal in (False, True) for seq in seqs]


def gemm_grid(sizes=GEMM_SIZES, dtypes=("f16",)):
    return [GemmPoint(size, size, size, dtype) for dtype in dtypes for size in sizes]


POINT_FORMS = ("BxHxSxD-causal, BxHxSxD-noncausal or BxHxSxD-kvN-(non)causal with N dividing H "
               "(attention, e.g. 1x1x131072x128-causal or 1x32x8192x128-kv8-causal), or MxNxK "
               "(GEMM, e.g. 4096x4096x4096)")


def parse_point(text, dtype, regime="points"):
    """A point named on a command line: "BxHxSxD[-kvN]-causal" or "...-noncausal" (attention,
    its own B*H, e.g. enough work for >= 1 ms), or "MxNxK" (GEMM). ValueError naming the text and
    the allowed forms (POINT_FORMS) for anything else."""
    try:
        parts = text.split("-")
        sizes = [int(x) for x in parts[0].split("x")]
        if len(sizes) == 3 and len(parts) == 1 and min(sizes) >= 1:
            return GemmPoint(*sizes, dtype)
        mask, kv_heads = parts[-1], 0
        if len(parts) == 3 and parts[1].startswith("kv"):
            kv_heads = int(parts[1][2:])
        elif len(parts) != 2:
            raise ValueError(text)
        b, h, s, d = sizes
        if (mask not in ("causal", "noncausal") or min(b, h, s, d) < 1 or kv_heads < 0
                or (kv_heads and h % kv_heads)):
            raise ValueError(text)
    except ValueError:
        raise ValueError(f"bad point '{text}': allowed {POINT_FORMS}") from None
    return AttentionPoint(regime, b, h, s, d, dtype, mask == "causal", kv_heads)


def full_grid(regimes=("short", "long", "models", "gemm"), quick=False):
    """Every point of the named regimes; `quick` keeps a few of each, for a smoke run."""
    points = []
    if "short" in regimes:
        points += (short_grid(seqs=(1024, 4096), head_dims=(64, 96, 128), dtypes=("f16",))
                   if quick else short_grid())
    if "long" in regimes:
        points += long_grid(seqs=(16384, 65536)) if quick else long_grid()
    if "models" in regimes:
        points += model_grid(seqs=(4096,)) if quick else model_grid()
    if "gemm" in regimes:
        points += gemm_grid(sizes=(2048,)) if quick else gemm_grid()
    return points
