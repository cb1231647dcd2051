"""The attention training step of swr, FlashAttention-4 and cuDNN each timed twice on a GPU machine:
in a burst, the GPU rested (4 s idle, a warm-up, then 10 runs each after an L2 flush, the median),
and sustained, at its power cap (1.5 s back to back, the second half timed by device events).
Forward + backward and the forward alone, so that the backward is their difference; the same
calls as bench/training_step.py's (its candidates and inputs). Shows whether a gap between two
candidates is one of speed or of energy: a candidate that spends more energy a step loses more at
the cap.

    training_step_power.py --catalog tuned.db --points 2x16x16384x128-noncausal
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
    args = parser.parse_args(argv)
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
    for point in points:
        steps = candidates(torch, swr_torch, catalog, point, dtype)
        q, k, v, grad = inputs(torch, point, dtype)
        forwards = forward_calls(swr_torch, catalog, point, q, k, v)
        for name in ("swr", "fa4", "cudnn"):
            step = steps.get(name)
            if not callable(step):
                print(f"{point['name']:26} {name:6} not timed: {step}")
                continue
            forward = forwards[name]
            both = lambda: step(q, k, v, grad)
            # Each call rested, then in a burst, then sustained; forward + backward first.
            timed = {}
            for label, call in (("both", both), ("forward", forward)):
                timed[label] = (burst_ms(torch, call, flush),
                                device_timing.sustained_ms(torch, call, SUSTAINED_S))
            for index, mode in enumerate(("burst", "sustained")):
                both_ms, forward_ms = timed["both"][index], timed["forward"][index]
                backward_ms = both_ms - forward_ms
                print(f"{point['name']:26} {name:6} {mode:9} fwd+bwd {both_ms:8.3f} ms "
                      f"{3.5 * flops(point) / both_ms / 1e9:6.1f} TF | fwd {forward_ms:7.3f} ms "
                      f"{flops(point) / forward_ms / 1e9:6.1f} TF | bwd {backward_ms:7.3f} ms "
                      f"{2.5 * flops(point) / backward_ms / 1e9:6.1f} TF", flush=True)


if __name__ == "__main__":
    main()
