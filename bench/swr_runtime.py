"""swr in a benchmark, through the runtime library only: the variant is the one the runtime
chooses from a catalog (swr.Catalog.best_attention / best_gemm, the same lookup swr::Attention and
swr::Gemm make), and it is launched by the runtime (swr.Catalog.run_attention / run_gemm) on the
tensors' device pointers and PyTorch's current stream. Nothing here loads a cubin or picks a
variant itself, so what a benchmark times is what a program linking libswr_runtime.so runs.

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
                                                point.head_dim, point.dtype, point.causal))


def gemm_choice(catalog, gpu, point):
    return choice_fields(catalog.best_gemm(gpu, point.m, point.n, point.k, point.dtype))


def attention_call(torch, catalog, gpu, point, q, k, v, out):
    """One launch of the runtime's choice for `point` on q, k, v -> out, on PyTorch's stream."""
    return lambda: catalog.run_attention(
        q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), batch=point.batch,
        heads=point.heads, seq_q=point.seq, head_dim=point.head_dim, dtype=point.dtype,
        causal=point.causal, stream=torch.cuda.current_stream().cuda_stream, gpu=gpu)


def gemm_call(torch, catalog, gpu, point, a, b, c):
    """One launch of the runtime's choice for `point`: c = a @ b, on PyTorch's stream."""
    return lambda: catalog.run_gemm(a.data_ptr(), b.data_ptr(), c.data_ptr(), point.m, point.n,
                                    point.k, point.dtype,
                                    stream=torch.cuda.current_stream().cuda_stream, gpu=gpu)
