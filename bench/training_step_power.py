"""The attention training step of swr, FlashAttention-4 and cuDNN each timed twice on a GPU machine:
in a burst, the GPU rested (4 s idle, a warm-up, then 10 runs each after an L2 flush, the median),
and sustained, at its power cap (1.5 s back to back, the second half timed by device events).
Forward + backward and the forward alone, so that the backward is their difference; the same
calls as bench/training_step.py's (its candidates and inputs). Sustained, the joules a call too
(NVML's energy counter over the timed half, where the driver has one). Shows whether a gap between
two candidates is one of speed or of energy: a candidate that spends more energy a step loses more
at the cap.

    training_step_power.py --catalog tuned.db --points 2x16x16384x128-noncausal [--rounds 2]
"""
import argparse
import statistics
import time

import device_timing
from training_step import candidates, flops, forward_calls, gpu_session, inputs, parse_point

IDLE_S = 4.0
BURST_RUNS = 10
SUSTAINED_S = 1.5


def burst_ms(torch, call, flush):
    time.sleep(IDLE_S)
    call()
    torch.cuda.synchronize()
    return statistics.median(device_timing.time_once(torch, call, flush) for _ in range(BURST_RUNS))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--catalog", required=True, help="results database swr reads")
    parser.add_argument("--points", nargs="+", required=True,
                        help="BxHxSxD-causal|noncausal (bf16, no GQA)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="times each point's candidates in turn this many times (default 1)")
    parser.add_argument("--nvml-index", type=int, default=0,
                        help="NVML's index of the GPU timed (PCI bus order; default 0)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: allowed a positive number")
    points = []
    for text in args.points:
        try:
            point = parse_point(text)
        except ValueError as error:
            parser.error(str(error))
        if point["kv_heads"] != point["heads"]:
            parser.error(f"point {text!r}: allowed without -kvN "
                         "(this script times MHA points only)")
        points.append(point)

    torch, swr_torch, dtype, catalog, _, flush = gpu_session("bf16", args.catalog)
    try:
        energy = device_timing.EnergyCounter(args.nvml_index)
    except (OSError, RuntimeError) as error:  # no NVML or no counter: times only
        print(f"energy not measured: {error}")
        energy = None
    for point in points:
        steps = candidates(torch, swr_torch, catalog, point, dtype)
        q, k, v, grad = inputs(torch, point, dtype)
        forwards = forward_calls(swr_torch, catalog, point, q, k, v)
        for round_index in range(args.rounds):
            for name in ("swr", "fa4", "cudnn"):
                step = steps.get(name)
                if not callable(step):
                    if round_index == 0:
                        print(f"{point['name']:26} {name:6} not timed: {step}")
                    continue
                print_candidate(torch, point, name, lambda step=step: step(q, k, v, grad),
                                forwards[name], flush, energy)


def print_candidate(torch, point, name, both, forward, flush, energy):
    """One candidate's lines: each call rested, then in a burst, then sustained; forward + backward
    first."""
    burst, sustained = {}, {}
    for label, call in (("both", both), ("forward", forward)):
        burst[label] = burst_ms(torch, call, flush)
        sustained[label] = device_timing.sustained(torch, call, SUSTAINED_S, energy)
    for mode, both_ms, forward_ms in (("burst", burst["both"], burst["forward"]),
                                      ("sustained", sustained["both"]["ms"],
                                       sustained["forward"]["ms"])):
        backward_ms = both_ms - forward_ms
        line = (f"{point['name']:26} {name:6} {mode:9} fwd+bwd {both_ms:8.3f} ms "
                f"{3.5 * flops(point) / both_ms / 1e9:6.1f} TF | fwd {forward_ms:7.3f} ms "
                f"{flops(point) / forward_ms / 1e9:6.1f} TF | bwd {backward_ms:7.3f} ms "
                f"{2.5 * flops(point) / backward_ms / 1e9:6.1f} TF")
        if mode == "sustained" and energy:
            both_j, forward_j = sustained["both"]["joules"], sustained["forward"]["joules"]
            line += (f" | J: fwd+bwd {both_j:6.3f} fwd {forward_j:6.3f} bwd "
                     f"{both_j - forward_j:6.3f} ({sustained['both']['watts']:.0f} W, "
                     f"{sustained['forward']['watts']:.0f} W)")
        print(line, flush=True)

if __name__ == "__main__":
    main()
