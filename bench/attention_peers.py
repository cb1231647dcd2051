"""One attention point: swr's variant as the runtime chose it (called through swr.torch, as a user
calls it: swr_runtime.py) and each PyTorch SDPA backend on the same inputs, each checked against a
fused reference, then timed together, interleaved, with the same L2 flush (device_timing).
swr's output memory is filled with NaN before its checked call (poison_next_output), so that an
element its kernel does not write fails the check.

Candidate statuses: ok; missing (this PyTorch has no such backend); unavailable (the backend
refuses this shape or dtype, its first error line is the note); unsupported (swr has no kernel for
this head dim); untuned (nothing in the catalog serves this point); skipped (the math path would
not fit in memory); wrong (relative error above the dtype's bound); failed (launch error).

Grouped-query points (K and V with fewer heads than Q) call SDPA with enable_gqa=True; a backend
that refuses it is run on K and V repeated to every query head instead (repeated once, outside
the timing: what a user of that backend does), and its result says so (kv_repeated).
"""
import warnings

import device_timing

# Name in the results, SDPBackend member. FA2 is PyTorch's FLASH_ATTENTION backend.
PEERS = (("flash2", "FLASH_ATTENTION"), ("cudnn", "CUDNN_ATTENTION"),
         ("efficient", "EFFICIENT_ATTENTION"), ("math", "MATH"))
# FlashAttention-4 is no SDPA backend: the flash-attn package's CuTe DSL kernels (Hopper and
# Blackwell), called on [B, S, H, D] tensors, run where `flash_attn.cute` imports.
FLASH4 = "flash4"


def flash4_function():
    """flash_attn.cute's flash_attn_func, or None (with why) where it does not import."""
    try:
        from flash_attn.cute import flash_attn_func
    except Exception as error:  # ImportError, or a CUDA/CuTe error raised while importing
        return None, f"flash_attn.cute (FlashAttention-4) does not import: {first_line(error)}"
    return flash_attn_func, None
FUSED_REFERENCES = ("flash2", "cudnn", "efficient")
TOLERANCE = {"f16": 2e-3, "bf16": 1e-2}  # relative Frobenius error against the fused reference


def math_path_bytes(point):
    """What the unfused path holds at once: about three S x S matrices per (batch, head) (scores,
    probabilities, a temporary), in fp32 since PyTorch's math backend computes fp16/bf16 in fp32
    by default, plus the causal mask; an estimate (an out-of-memory error is caught anyway)."""
    squares = point.batch * point.heads * point.seq * point.seq
    return squares * (3 * 4 + (1 if point.causal else 0))


def first_line(error):
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def why_refused(error, caught):
    """The error's first line and PyTorch's first warning, which says why a backend refused."""
    reasons = [first_line(w.message) for w in caught if issubclass(w.category, UserWarning)]
    note = first_line(error) + (f" ({reasons[0]})" if reasons else "")
    return note if len(note) <= 300 else note[:297] + "..."


def poison_next_output(torch, like):
    """Fills with NaN the memory that the next tensor shaped like `like` will get, and returns its
    address. swr.torch allocates its output with torch.empty: without this, the caching allocator
    could hand it the block a peer's output (the reference) just freed, and a kernel that wrote
    nothing would pass. Cached free blocks go back to the driver first, so that the poisoned block
    is the one free block of that size; the caller compares addresses to know it was used."""
    torch.cuda.empty_cache()
    scratch = torch.full_like(like, float("nan"))
    pointer = scratch.data_ptr()
    del scratch
    return pointer


def relative_error(torch, out, reference):
    return ((out.float() - reference.float()).norm() / reference.float().norm()).item()


class AttentionBench:
    def __init__(self, torch, flush, timing, peers=PEERS):
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel

        self.torch, self.F, self.sdpa_kernel = torch, F, sdpa_kernel
        self.flush, self.timing = flush, timing
        self.backends = {name: getattr(SDPBackend, member, None) for name, member in peers}
        self.flash4, self.flash4_missing = flash4_function()

    def add_flash4(self, point, q, k, v, results, calls, outputs):
        """FlashAttention-4 on [B, S, H, D] copies of the inputs (made once, outside the timing;
        K/V with their own heads: it takes grouped-query attention as it is)."""
        if self.flash4 is None:
            results[FLASH4] = {"status": "missing", "note": self.flash4_missing}
            return None
        inputs = tuple(t.transpose(1, 2).contiguous() for t in (q, k, v))

        def call():
            out = self.flash4(*inputs, causal=point.causal)
            return out[0] if isinstance(out, tuple) else out

        try:
            outputs[FLASH4] = call().transpose(1, 2)  # [B, H, S, D] for the comparison
            calls[FLASH4] = call
        except (RuntimeError, ValueError, TypeError, AssertionError, NotImplementedError) as error:
            self.torch.cuda.empty_cache()
            results[FLASH4] = {"status": "unavailable", "note": first_line(error)}
        return inputs

    @staticmethod
    def inputs(torch, point):
        """Random Q [B, H, S, D] and K, V [B, H_kv, S, D] of the point's dtype, on the GPU."""
        dtype = torch.float16 if point.dtype == "f16" else torch.bfloat16
        q = torch.randn(point.batch, point.heads, point.seq, point.head_dim, device="cuda",
                        dtype=dtype)
        kv_shape = (point.batch, point.kv_head_count(), point.seq, point.head_dim)
        k = torch.randn(*kv_shape, device="cuda", dtype=dtype)
        v = torch.randn(*kv_shape, device="cuda", dtype=dtype)
        return q, k, v

    def sdpa(self, backend, q, k, v, causal, grouped=False):
        with self.sdpa_kernel(backend):
            if grouped:
                return self.F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                           enable_gqa=True)
            return self.F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def run(self, point, swr):
        """swr: {"call": (q, k, v) -> a call of swr.torch.attention}, or {"status", "note"}
        when swr does not run this point. Returns {candidate: result}."""
        torch = self.torch
        q, k, v = self.inputs(torch, point)
        grouped = point.grouped()
        repeated = None  # K and V over every query head, made once for backends refusing GQA
        results, calls, outputs, notes = {}, {}, {}, {}

        for name, backend in self.backends.items():
            if backend is None:
                results[name] = {"status": "missing", "note": f"this PyTorch has no {name} backend"}
                continue
            if name == "math" and math_path_bytes(point) > 0.8 * torch.cuda.mem_get_info()[0]:
                results[name] = {"status": "skipped", "note": (
                    f"would need ~{math_path_bytes(point) / 1e9:.0f} GB for the S x S matrices")}
                continue
            call = lambda backend=backend: self.sdpa(backend, q, k, v, point.causal, grouped)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    outputs[name] = call()
                    calls[name] = call
                except RuntimeError as error:  # includes torch.cuda.OutOfMemoryError
                    torch.cuda.empty_cache()
                    results[name] = {"status": "unavailable", "note": why_refused(error, caught)}
            if name in results and grouped:
                if repeated is None:
                    group = point.heads // point.kv_head_count()
                    repeated = (k.repeat_interleave(group, dim=1),
                                v.repeat_interleave(group, dim=1))
                call = lambda backend=backend: self.sdpa(backend, q, *repeated, point.causal)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    try:
                        outputs[name] = call()
                        calls[name] = call
                        notes[name] = ("K/V repeated to every query head (enable_gqa refused: "
                                       + results.pop(name)["note"] + ")")
                    except RuntimeError:
                        torch.cuda.empty_cache()

        flash4_inputs = self.add_flash4(point, q, k, v, results, calls, outputs)

        reference_name = next((n for n in FUSED_REFERENCES if n in outputs), None)
        reference = outputs.get(reference_name)
        for name in list(calls):
            if reference is not None and name != reference_name:
                results[name] = {"relative_error": relative_error(torch, outputs[name], reference)}
            else:
                results[name] = {"relative_error": 0.0 if name == reference_name else None}
            if name in notes:
                results[name].update(kv_repeated=True, note=notes[name])
        outputs.clear()

        if swr.get("call") is not None:
            call = swr["call"](q, k, v)
            try:
                poisoned_pointer = poison_next_output(torch, q)
                out = call()
                torch.cuda.synchronize()
                poisoned = out.data_ptr() == poisoned_pointer
                # A NaN or Inf left anywhere in O makes the norm, hence the error, non-finite.
                error = relative_error(torch, out, reference) if reference is not None else None
                if error is not None and not error < TOLERANCE[point.dtype]:
                    results["swr"] = {"status": "wrong", "relative_error": error, "note": (
                        f"relative error {error:.2e} against {reference_name}")}
                else:
                    calls["swr"] = call
                    results["swr"] = {"relative_error": error}
                results["swr"]["output_poisoned"] = poisoned
            except RuntimeError as error:
                results["swr"] = {"status": "failed", "note": first_line(error)}
        else:
            results["swr"] = {"status": swr["status"], "note": swr["note"]}

        try:
            timed = device_timing.time_interleaved(torch, calls, self.flush, **self.timing)
        except RuntimeError as error:  # e.g. out of memory in a later run: the point fails alone
            torch.cuda.empty_cache()
            timed = {}
            for name in calls:
                results[name] = {"status": "failed", "note": "while timing: " + first_line(error)}
        for name, summary in timed.items():
            results[name].update(summary)
            results[name]["status"] = "ok"
            results[name]["tflops"] = point.flops() / summary["median_ms"] / 1e9
            results[name]["tokens_per_s"] = point.tokens() / summary["median_ms"] * 1e3
        results["swr"].setdefault("reference", reference_name)
        del q, k, v, calls, repeated, flash4_inputs
        torch.cuda.empty_cache()
        return results
