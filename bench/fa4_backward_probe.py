"""FlashAttention-4's sm90 backward at head dim 128, probed on a GPU machine (FA4 installed as
../shared/peers/fa4/pack.sh says), with bench/device_timing.py's method:

  fa4_backward_probe.py tiles        its backward with the Q tile forced to 80 rows (its own
                                     choice without a mask) and 64 (its causal one), interleaved,
                                     at five of issue 27's D128 points
  fa4_backward_probe.py lead         at B2 H16 S16384 D128: its backward called directly (dO laid
                                     [B,S,H,D], or [B,H,S,D] seen transposed as
                                     bench/training_step.py hands it), its step and its forward,
                                     each timed without and with a spin kernel ahead of the start
                                     event (time_once's lead_cycles)
  fa4_backward_probe.py prof causal|noncausal M
                                     forward once, backward three times at B1 H16 S8192 with an
                                     M-row Q tile (for ncu --kernel-name regex:FlashAttentionBackwardSm90)
"""
import dataclasses
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

import device_timing  # noqa: E402
from flash_attn.cute import interface  # noqa: E402
from flash_attn.cute.interface import flash_attn_func  # noqa: E402

_forced_tile = {"m": None}
_original_tile_size = interface._tile_size_bwd_sm90


def _tile_size(head_dim, head_dim_v, causal, local, sparse_block_size_q=None):
    config = _original_tile_size(head_dim, head_dim_v, causal, local, sparse_block_size_q)
    m = _forced_tile["m"]
    return config if m is None else dataclasses.replace(config, m_block_size=m,
                                                        dQ_swapAB=m % 64 != 0)


interface._tile_size_bwd_sm90 = _tile_size  # FA4 looks it up at each call


def forward(batch, heads, seq, causal):
    torch.manual_seed(0)
    q, k, v, d_o = (torch.randn(batch, seq, heads, 128, device="cuda", dtype=torch.bfloat16)
                    for _ in range(4))
    out, lse = interface._flash_attn_fwd(q, k, v, causal=causal, return_lse=True)[:2]
    return q, k, v, out, d_o, lse


def backward(tensors, causal, m=None):
    _forced_tile["m"] = m
    return interface._flash_attn_bwd(*tensors, causal=causal)


def flush():
    return device_timing.L2Flush(torch, torch.cuda.get_device_properties(0).L2_cache_size)


def tiles():
    points = [(2, 16, 16384, False), (1, 16, 32768, False), (4, 16, 4096, False),
              (2, 16, 16384, True), (1, 16, 32768, True)]
    for batch, heads, seq, causal in points:
        tensors = forward(batch, heads, seq, causal)
        reference = backward(tensors, causal)
        calls = {}
        for m in (80, 64):
            got = backward(tensors, causal, m)
            error = max(((a.float() - r.float()).abs().max() / r.float().abs().max()).item()
                        for a, r in zip(got[:3], reference[:3]))
            print(f"# {batch}x{heads}x{seq} causal={causal} m{m}: max relative difference "
                  f"from FA4's own tile {error:.2e}", flush=True)
            calls[f"m{m}"] = lambda m=m: backward(tensors, causal, m)
        timed = device_timing.time_interleaved(torch, calls, flush(), target_s=1.0, min_reps=5,
                                               max_reps=30)
        flops = 2.5 * 4 * batch * heads * seq * seq * 128 / (2 if causal else 1)
        print(f"{batch}x{heads}x{seq}x128 {'causal' if causal else 'noncausal'}: " + " ".join(
            f"{name} {r['median_ms']:.3f} ms {flops / r['median_ms'] / 1e9:.0f} TF/s"
            for name, r in timed.items()), flush=True)


def lead(spin_cycles=20_000_000, rounds=12):
    scratch = flush()
    for causal in (False, True):
        q, k, v, out, d_o, lse = forward(2, 16, 16384, causal)
        d_o_bhsd = d_o.transpose(1, 2).contiguous().transpose(1, 2)
        qg, kg, vg = (t.detach().transpose(1, 2).requires_grad_(True) for t in (q, k, v))
        grad = d_o.transpose(1, 2).contiguous()

        def fa4_forward():
            result = flash_attn_func(qg.transpose(1, 2), kg.transpose(1, 2), vg.transpose(1, 2),
                                     causal=causal)
            return (result[0] if isinstance(result, tuple) else result).transpose(1, 2)

        calls = {
            "bwd dO bshd": lambda: interface._flash_attn_bwd(q, k, v, out, d_o, lse, causal=causal),
            "bwd dO bhsd^T": lambda: interface._flash_attn_bwd(q, k, v, out, d_o_bhsd, lse,
                                                               causal=causal),
            "step": lambda: torch.autograd.grad(fa4_forward(), (qg, kg, vg), grad),
            "fwd": fa4_forward,
        }
        for cycles in (0, spin_cycles):
            for call in calls.values():
                call()
            times = {name: [] for name in calls}
            for _ in range(rounds):
                for name, call in calls.items():
                    times[name].append(device_timing.time_once(torch, call, scratch, cycles))
            median = {name: sorted(t)[len(t) // 2] for name, t in times.items()}
            print(f"causal={causal} lead_cycles={cycles}: " +
                  "  ".join(f"{name} {ms:.3f}" for name, ms in median.items()) +
                  f"  step-fwd {median['step'] - median['fwd']:.3f}", flush=True)


def main(argv):
    if argv[:1] == ["tiles"]:
        tiles()
    elif argv[:1] == ["lead"]:
        lead()
    elif len(argv) == 3 and argv[0] == "prof" and argv[1] in ("causal", "noncausal"):
        tensors = forward(1, 16, 8192, argv[1] == "causal")
        for _ in range(3):
            backward(tensors, argv[1] == "causal", int(argv[2]))
        torch.cuda.synchronize()
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
