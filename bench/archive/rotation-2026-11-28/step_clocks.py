#!/usr/bin/env python3
"""The SM clock and power beside each interleaved run of bench/training_step.py's calls (swr and
FA4: step and forward), sampled through NVML every ~0.3 ms on a host thread: does a candidate's
time follow its clock (energy) or its cycles (work)?"""
import argparse, ctypes, json, statistics, sys, threading, time, zlib
import device_timing
from training_step import candidates, flops, forward_calls, gpu_session, inputs, parse_point


class Sampler(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.nvml = ctypes.CDLL("libnvidia-ml.so.1")
        self.nvml.nvmlInit_v2()
        self.handle = ctypes.c_void_p()
        self.nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self.handle))
        self.samples, self.stop = [], False

    def run(self):
        clock, power = ctypes.c_uint(), ctypes.c_uint()
        while not self.stop:
            self.nvml.nvmlDeviceGetClockInfo(self.handle, 1, ctypes.byref(clock))
            self.nvml.nvmlDeviceGetPowerUsage(self.handle, ctypes.byref(power))
            self.samples.append((time.time(), clock.value, power.value / 1000.0))
            time.sleep(0.0003)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", nargs="+", required=True)
    parser.add_argument("--catalog")
    parser.add_argument("--target-seconds", type=float, default=1.0)
    parser.add_argument("--out")
    args = parser.parse_args()
    torch, swr_torch, dtype, catalog, props, flush = gpu_session("bf16", args.catalog)
    sampler = Sampler()
    sampler.start()
    results = []
    for text in args.points:
        point = parse_point(text)
        q, k, v, grad = inputs(torch, point, dtype)
        steps = candidates(torch, swr_torch, catalog, point, dtype)
        forwards = forward_calls(swr_torch, catalog, point, q, k, v)
        timed = {}
        for name in ("swr", "fa4"):
            if callable(steps.get(name)):
                timed[name + " fwd+bwd"] = lambda s=steps[name]: s(q, k, v, grad)
                timed[name + " fwd"] = forwards[name]
            else:
                print(name, steps.get(name))
        log = []
        summaries = device_timing.time_interleaved(torch, timed, flush, target_s=args.target_seconds,
                                                   max_reps=20, order="balanced",
                                                   seed=zlib.crc32(text.encode()), run_log=log)
        for run in log:
            inside = [s for s in sampler.samples if run["at"] <= s[0] <= run["at"] + run["ms"] / 1000.0 + 0.0005]
            run["clock_mhz"] = statistics.mean(s[1] for s in inside) if inside else None
            run["power_w"] = statistics.mean(s[2] for s in inside) if inside else None
            run["samples"] = len(inside)
        for name, summary in summaries.items():
            runs = [r for r in log if r["name"] == name and r["clock_mhz"]]
            clock = statistics.median(r["clock_mhz"] for r in runs)
            power = statistics.median(r["power_w"] for r in runs)
            mcycles = statistics.median(r["ms"] * r["clock_mhz"] / 1000.0 for r in runs)
            print(f"{text:26} {name:12} {summary['median_ms']:8.3f} ms  clock {clock:6.0f} MHz  "
                  f"power {power:5.0f} W  Mcycles {mcycles:7.2f}  samples/run "
                  f"{statistics.median(r['samples'] for r in runs)}", flush=True)
        results.append({"point": text, "summaries": summaries, "runs": log})
    sampler.stop = True
    if args.out:
        json.dump({"device": props.name, "points": results}, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
