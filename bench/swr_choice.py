"""Which swr variant the grid runs for a shape: the tuned best from a results database, else the
best of the nearest tuned shape, else a default config. Every point says which one it got.

Input is what `swr-tune show --json` prints, in either of its forms: the summary (one "best" per
GPU and problem, `show --db PATH`) or one shape's variants (`show --seq S ... --json`, as
bench/results/l2-sweep-h200/measured_*.json keep them), or the manifest.json of an export
directory (`swr-tune export`), whose cubins then need no compiling. Pure Python.
"""
import math
from dataclasses import dataclass
from typing import Optional

# A variant in every space the grid has (head_major, no persistence loop): fast for both head dims
# on an H200 (bench/results/attention-h200) and the one bench/l2_sweep.sh measured everywhere.
DEFAULT_CONFIG = "m128n64w4s2-cyclic-grid-head_major"


@dataclass(frozen=True)
class TunedShape:
    """The best valid variant of one tuned problem, with the tuner's own figures."""
    problem_key: str
    batch: int
    heads: int
    seq_q: int
    seq_kv: int
    head_dim: int
    dtype: str
    causal: bool
    config_key: str
    median_ms: float
    tflops: Optional[float]
    l2_sector_misses: Optional[float]
    l2_hit_rate: Optional[float]
    dram_bytes: Optional[float]
    gpu: str


@dataclass(frozen=True)
class SwrChoice:
    config_key: str
    source: str  # "tuned", "nearest" or "default"
    tuned: Optional[TunedShape]  # the shape whose best it is (none for the default)
    note: str


def _best_of_variants(variants):
    ok = [v for v in variants if v.get("status") == "ok" and v.get("median_ms")]
    return min(ok, key=lambda v: (v["median_ms"], v["config_key"])) if ok else None


def _tuned_shape(gpu, problem, best):
    dram = None
    if best.get("dram_read_bytes") is not None or best.get("dram_write_bytes") is not None:
        dram = (best.get("dram_read_bytes") or 0.0) + (best.get("dram_write_bytes") or 0.0)
    return TunedShape(
        problem_key=problem["key"], batch=problem["batch"], heads=problem["heads"],
        seq_q=problem["seq_q"], seq_kv=problem["seq_kv"], head_dim=problem["head_dim"],
        dtype=problem["dtype"], causal=bool(problem["causal"]), config_key=best["config_key"],
        median_ms=best["median_ms"], tflops=best.get("tflops"),
        l2_sector_misses=best.get("l2_sector_misses"), l2_hit_rate=best.get("l2_hit_rate"),
        dram_bytes=dram, gpu=gpu["name"])


def tuned_shapes_from_show_json(document, gpu_name=None):
    """TunedShapes of the attention problems in one `swr-tune show --json` document."""
    shapes = []
    for result in document.get("results", []):
        gpu, problem = result.get("gpu", {}), result.get("problem", {})
        if problem.get("family", "attention") != "attention":
            continue
        if gpu_name and gpu.get("name") != gpu_name:
            continue
        best = result.get("best") if "best" in result else _best_of_variants(
            result.get("variants", []))
        if best:
            shapes.append(_tuned_shape(gpu, problem, best))
    return shapes


def tuned_shapes_from_export(manifest, gpu_name=None):
    """TunedShapes of an export manifest (runtime/export_manifest.hpp): one per exported kernel."""
    shapes = []
    for kernel in manifest.get("kernels", []):
        if gpu_name and kernel["gpu"]["name"] != gpu_name:
            continue
        best = dict(kernel["measured"], config_key=kernel["config_key"])
        shapes.append(_tuned_shape(kernel["gpu"], kernel["problem"], best))
    return shapes


def exported_cubins(manifest, directory):
    """{(head_dim, dtype, causal, config key): (directory, entry, kernel)} in the form
    swr_kernels.SwrVariant loads, for every cubin of an export."""
    cubins = {}
    for kernel in manifest.get("kernels", []):
        problem = kernel["problem"]
        cubins[(problem["head_dim"], problem["dtype"], bool(problem["causal"]),
                kernel["config_key"])] = (
            directory, kernel["entry"],
            {"key": kernel["config_key"], "config": kernel["config"],
             "file": kernel["cubin"]["file"], "threads": kernel["block_threads"],
             "dynamic_shared_bytes": kernel["dynamic_shared_bytes"]})
    return cubins


def _distance(point, shape):
    """Log distance in S, then in B*H: the K/V working set grows with S, the wave with B*H."""
    return (abs(math.log2(shape.seq_kv / point.seq)),
            abs(math.log2((shape.batch * shape.heads) / (point.batch * point.heads))))


def choose_config(point, tuned_shapes):
    """The variant to run for `point` (an AttentionPoint) and why."""
    exact = [s for s in tuned_shapes if s.problem_key == point.key()]
    if exact:
        best = min(exact, key=lambda s: s.median_ms)
        return SwrChoice(best.config_key, "tuned", best, "tuned best for this shape")
    same_kind = [s for s in tuned_shapes if s.seq_q == s.seq_kv and
                 (s.head_dim, s.dtype, s.causal) == point.compiled_part()]
    other_dtype = [s for s in tuned_shapes if s.seq_q == s.seq_kv and
                   (s.head_dim, s.causal) == (point.head_dim, point.causal)]
    for pool, what in ((same_kind, ""), (other_dtype, ", other dtype")):
        if pool:
            nearest = min(pool, key=lambda s: (_distance(point, s), s.problem_key))
            return SwrChoice(nearest.config_key, "nearest", nearest,
                             f"not tuned: best of nearest tuned shape {nearest.problem_key}{what}")
    return SwrChoice(DEFAULT_CONFIG, "default", None,
                     f"not tuned: default config {DEFAULT_CONFIG}")
