"""A backward's K/V tile cost and Q step cost, swr against FlashAttention-4, on a GPU machine.

FA4 installed as ../shared/peers/fa4/pack.sh says; swr's backward served by swr.torch from a
catalog tuned at each shape (swr-tune --family attention-backward ... --config KEY to fix the
variant; bench/results/attention-backward-ws-h200/parity-h100-2026-11-26/ names the commands).

The K/V length, and so the number of tiles and waves, stays fixed while the Q length grows: each
tile walks more Q steps. A backward's time is then about waves x (tile cost + steps x step cost),
a line in the Q length whose intercept is the tiles' fixed cost (launch, K and V loaded, the
pipeline filled and drained, dK and dV stored) and whose slope is the steps'. Both backwards are
timed alone, as autograd runs them (`torch.autograd.grad` on a kept graph), with
bench/device_timing.py's method.

  backward_tile_cost.py --catalog DB [--batch 1 --heads 16 --seq-kv 8192 --head-dim 128]
                        [--seq-q 1280 2560 5120 10240 20480]
                        [--sustained SECONDS --rounds N --clocks CSV]
(--causal only where the lengths are equal: FA4 and swr align the diagonal differently otherwise)

With --sustained, each backward then also runs back to back for SECONDS at the last Q length, in
alternating rounds (device_timing.sustained_ms: the GPU at its power cap), and with --clocks (a
file `nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader -lms 50`
writes meanwhile) the median SM clock and power over each one's timed halves: under the cap the
backward that spends less energy a step runs at a higher clock.
"""
import argparse
import datetime
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def clock_samples(path, windows):
    """Median SM clock (MHz) and power (W) of the nvidia-smi samples inside the (start, end)
    windows, host times."""
    clocks, watts = [], []
    for line in open(path):
        fields = [f.strip() for f in line.split(",")]
        try:
            at = datetime.datetime.strptime(fields[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            mhz, power = float(fields[1].split()[0]), float(fields[2].split()[0])
        except (ValueError, IndexError):
            continue
        if any(start <= at <= end for start, end in windows):
            clocks.append(mhz)
            watts.append(power)
    if not clocks:
        return "no clock samples"
    return (f"SM clock {statistics.median(clocks):.0f} MHz, {statistics.median(watts):.0f} W "
            f"({len(clocks)} samples)")


def sustained(torch, device_timing, calls, args):
    ms = {name: [] for name in calls}
    windows = {name: [] for name in calls}
    for round_index in range(args.rounds):
        names = list(calls) if round_index % 2 == 0 else list(calls)[::-1]
        for name in names:
            started = time.time()
            ms[name].append(device_timing.sustained_ms(torch, calls[name], args.sustained))
            # sustained_ms times the second half: the clock window is that half.
            windows[name].append((started + args.sustained / 2, time.time()))
    first = statistics.median(ms[list(calls)[0]])
    for name in calls:
        median = statistics.median(ms[name])
        clocks = clock_samples(args.clocks, windows[name]) if args.clocks else ""
        print(f"sustained {args.sustained:.1f} s x {args.rounds}: {name} {median:.4f} ms a call "
              f"({median / first:.4f}x); {clocks}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", required=True,
                        help="swr's results database, tuned at every shape timed here")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--seq-kv", type=int, default=8192, help="the K/V length (fixed)")
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--seq-q", type=int, nargs="+", default=[1280, 2560, 5120, 10240, 20480],
                        help="the Q lengths, one interleaved run each")
    parser.add_argument("--target-s", type=float, default=1.0,
                        help="seconds of runs per candidate at each Q length")
    parser.add_argument("--causal", action="store_true",
                        help="the causal mask: only where every Q length is the K/V length")
    parser.add_argument("--sustained", type=float, default=0.0,
                        help="seconds of back-to-back calls a round at the last Q length (0: none)")
    parser.add_argument("--rounds", type=int, default=3, help="sustained rounds")
    parser.add_argument("--clocks", help="nvidia-smi's log of the SM clock and power meanwhile")
    args = parser.parse_args(argv)
    if args.causal and any(seq_q != args.seq_kv for seq_q in args.seq_q):
        parser.error(f"--causal with --seq-q {args.seq_q}: allowed only Q lengths equal to "
                     f"--seq-kv {args.seq_kv} (FA4 and swr align the diagonal differently)")

    import torch
    import device_timing
    import swr
    import swr.torch as swr_torch
    from flash_attn.cute.interface import flash_attn_func

    catalog = swr.Catalog(args.catalog)
    flush = device_timing.L2Flush(torch, torch.cuda.get_device_properties(0).L2_cache_size)
    print(f"# {torch.cuda.get_device_name(0)}; B{args.batch} H{args.heads} S_kv {args.seq_kv} "
          f"D{args.head_dim} bf16 {'causal' if args.causal else 'no mask'}; backward alone, ms",
          flush=True)
    medians = {"swr": [], "fa4": []}
    for seq_q in args.seq_q:
        torch.manual_seed(seq_q)
        shape_q = (args.batch, args.heads, seq_q, args.head_dim)
        shape_kv = (args.batch, args.heads, args.seq_kv, args.head_dim)
        q = torch.randn(shape_q, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        k = torch.randn(shape_kv, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        v = torch.randn(shape_kv, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        grad = torch.randn(shape_q, device="cuda", dtype=torch.bfloat16)
        out_swr = swr_torch.attention(q, k, v, is_causal=args.causal, fallback="error",
                                      catalog=catalog)
        out_fa4 = flash_attn_func(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                  causal=args.causal)
        out_fa4 = (out_fa4[0] if isinstance(out_fa4, tuple) else out_fa4).transpose(1, 2)

        def backward(out):
            return lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)
        calls = {"swr": backward(out_swr), "fa4": backward(out_fa4)}
        got = {name: call() for name, call in calls.items()}
        error = max(((a.float() - b.float()).abs().max() / b.float().abs().max()).item()
                    for a, b in zip(got["swr"], got["fa4"]))
        timed = device_timing.time_interleaved(torch, calls, flush, target_s=args.target_s,
                                               min_reps=7, max_reps=40)
        for name in medians:
            medians[name].append(timed[name]["median_ms"])
        print(f"S_q {seq_q}: swr {timed['swr']['median_ms']:.4f} fa4 "
              f"{timed['fa4']['median_ms']:.4f} swr/fa4 "
              f"{timed['swr']['median_ms'] / timed['fa4']['median_ms']:.4f} (runs "
              f"{timed['swr']['runs']}; largest relative difference of dQ, dK, dV {error:.1e})",
              flush=True)
    if args.sustained > 0:
        sustained(torch, device_timing, calls, args)
    for name, ys in medians.items():
        if len(ys) < 2:
            continue
        slope, intercept = statistics.linear_regression(args.seq_q, ys)
        print(f"{name}: {intercept:.4f} ms + {slope * 1024:.4f} ms per 1024 Q rows", flush=True)


if __name__ == "__main__":
    main()
