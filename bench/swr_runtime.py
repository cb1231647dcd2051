"""swr in a benchmark, through the package a user calls: the variant is the one the runtime
chooses from a catalog (swr.Catalog.best_attention / best_gemm, the same lookup swr::Attention and
swr::Gemm make, and what swr.torch.explain reports), and each timed call is swr.torch.attention /
swr.torch.matmul with fallback="error" (so nothing but swr's kernel is ever timed as swr), which
launches through libswr_runtime.so on PyTorch's current stream. Nothing here loads a cubin or
picks a variant itself, so what a benchmark times is what a PyTorch user runs.

The binding is python/swr (found through PYTHONPATH=python, else from this repository), and it
loads libswr_runtime.so from $SWR_RUNTIME_LIBRARY (e.g. build/lib/libswr_runtime.so), else as
python/swr/_native.py says.
"""
import os
import sys

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def binding():
    """The swr package (python/swr), from PYTHONPATH or this repository."""
    try:
        import swr
    except ImportError:
        sys.path.insert(0, os.path.join(REPOSITORY, "python"))
        import swr
    return swr


def open_catalog(path):
    """A results database or an export directory, as swr.Catalog."""
    return binding().Catalog(path)


def choice_fields(choice):
    """A point's swr_* fields from a best_* answer: the config, the rule that gave it
    (swr_config_source: "exact", "nearest", or "none" when nothing tuned serves the point), a
    note saying so, and for an exact match what the tuner measured there."""
    if choice["match"] == "none":
        return {"swr_config": None, "swr_config_source": "none",
                "swr_note": "none: " + choice.get("why", "nothing tuned serves this point")}
    kernel = choice["kernel"]
    measured = kernel["measured"]
    if choice["match"] == "exact":
        note = f"exact: tuned at this shape on {kernel['gpu']['name']}"
    else:
        note = f"nearest: tuned at {choice['tuned_shape']}, distance {choice['distance']:.2f}"
    fields = {"swr_config": kernel["config_key"], "swr_config_source": choice["match"],
              "swr_note": note, "swr_tuned_shape": choice["tuned_shape"],
              "swr_distance": choice["distance"]}
    if choice["match"] == "exact":
        dram = None
        if measured.get("dram_read_bytes") is not None or measured.get("dram_write_bytes") is not None:
            dram = (measured.get("dram_read_bytes") or 0.0) + (measured.get("dram_write_bytes") or 0.0)
        fields["swr_tuned"] = {"l2_sector_misses": measured.get("l2_sector_misses"),
                               "l2_hit_rate": measured.get("l2_hit_rate"), "dram_bytes": dram,
                               "tuner_median_ms": measured.get("median_ms")}
    return fields


def attention_choice(catalog, gpu, point):
    return choice_fields(catalog.best_attention(gpu, point.batch, point.heads, point.seq,
                                                point.head_dim, point.dtype, point.causal,
                                                kv_heads=point.kv_head_count()))


def gemm_choice(catalog, gpu, point):
    return choice_fields(catalog.best_gemm(gpu, point.m, point.n, point.k, point.dtype))


def torch_entry():
    """The module the timed calls go through: swr.torch (a test puts a stand-in here)."""
    binding()
    import swr.torch
    return swr.torch


def _checked_against_the_plan(answer, gpu):
    """swr.torch looks kernels up under the device's own name: the benchmark's --gpu must be it,
    and what it runs must be swr's kernel (explain), or the figure would not be swr's."""
    if answer["gpu"] != gpu:
        raise ValueError(f"--gpu {gpu}: this device is {answer['gpu']} (allowed: {answer['gpu']})")
    if answer["runs"] != "swr":
        raise ValueError(f"swr.torch would not run swr here: {answer.get('why_not_swr')}")


def attention_call(catalog, gpu, point):
    """(q, k, v) -> a call of swr.torch.attention for `point` that returns its output."""
    entry = torch_entry()

    def bind(q, k, v):
        grouped = point.grouped()  # K/V over fewer heads: SDPA's enable_gqa
        _checked_against_the_plan(entry.explain(q, k, v, is_causal=point.causal,
                                                enable_gqa=grouped, catalog=catalog), gpu)
        return lambda: entry.attention(q, k, v, is_causal=point.causal, enable_gqa=grouped,
                                       fallback="error", catalog=catalog)
    return bind


def gemm_call(catalog, gpu, point):
    """(a, b) -> a call of swr.torch.matmul for `point` that returns a @ b."""
    entry = torch_entry()

    def bind(a, b):
        _checked_against_the_plan(entry.explain_matmul(a, b, catalog=catalog), gpu)
        return lambda: entry.matmul(a, b, fallback="error", catalog=catalog)
    return bind
