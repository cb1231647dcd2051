"""One timing method for swr and every peer: device events around one call, the L2 flushed (2x its
size written) before every run so that each run starts from the same cache state, a warm-up, then
rounds in which each candidate runs once (interleaved, so that clock and thermal drift spreads
over all) until it has its runs, median and p95 over them.

The order within a round: `balanced`, `shuffled` or `rotating`. Whatever a call leaves behind
lands on the call after it: above all the power controller's clock on a GPU at its power cap.
On an H100, averaged over issue 27's training steps, a step of swr, FA4 or cuDNN run right after
FlashAttention-2's low-power one took 0.8-2.5% less than its median, one right after another's
high-power step 1.7-2.8% more (bench/results/attention-backward-ws-h200/interleaving-2026-11-25).
Under `rotating` (the list's order, each round starting one later) a candidate nearly always runs
right after the same one, so that effect lands on it the same way in every round. `shuffled`
draws a new permutation every round. `balanced` runs whole cycles of a Williams design (each
round a row of it; the candidates relabelled at random every cycle): within a cycle every
candidate runs right after every other equally often, and every candidate runs in every round.
"""
import itertools
import math
import random
import statistics
import time

ORDERS = ("balanced", "shuffled", "rotating")
METHOD = ("device events around each call, one run at a time; L2 flushed (2x L2 bytes written) "
          "before every run; 1 warm-up run each; interleaved rounds (each candidate once per "
          "round, {order} order); runs per candidate: enough for ~{target_s} s, at least "
          "{min_reps}, at most {max_reps}; median and p95 over its runs")


def summarize(times_ms):
    """Median, p95 (nearest rank) and min of a list of run times in ms."""
    ordered = sorted(times_ms)
    p95 = ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]
    return {"median_ms": statistics.median(ordered), "p95_ms": p95, "min_ms": ordered[0],
            "runs": len(ordered)}


def rounds_for(slowest_ms, target_s, min_reps, max_reps):
    if slowest_ms <= 0:
        return max_reps
    return max(min_reps, min(max_reps, math.ceil(target_s * 1000.0 / slowest_ms)))


class L2Flush:
    """Writes twice the L2's size: what was cached before is gone, whoever ran last."""

    def __init__(self, torch, l2_bytes):
        self.scratch = torch.empty(2 * l2_bytes // 4, dtype=torch.int32, device="cuda")

    def __call__(self):
        self.scratch.zero_()


def time_once(torch, fn, flush, lead_cycles=0):
    """ms between device events around fn(), the L2 flushed first. With lead_cycles, a spin kernel
    that long runs before the start event, so that the host has enqueued fn's work before the GPU
    reaches it: the figure is then the device's alone, without the host time an idle GPU waits."""
    flush()
    if lead_cycles:
        torch.cuda._sleep(lead_cycles)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def williams_rows(n):
    """Rows of candidate indices 0..n-1 in which every ordered pair of two candidates is adjacent
    equally often (once for an even n in n rows; twice for an odd n in 2n, the rows and their
    reverses): the first row 0, 1, n-1, 2, n-2, ..., each next one that row plus 1 mod n."""
    first = [0] + [(step + 1) // 2 if step % 2 else n - step // 2 for step in range(1, n)]
    rows = [[(index + shift) % n for index in first] for shift in range(n)]
    return rows + [row[::-1] for row in rows] if n % 2 and n > 1 else rows


def round_orders(names, order, rng):
    """The candidates of each round, round after round, in the order they run (module
    docstring)."""
    if order not in ORDERS:
        raise ValueError(f"order {order!r}: allowed {', '.join(ORDERS)}")
    rows = williams_rows(len(names))

    def rounds():
        for round_index in itertools.count():
            if order == "rotating":
                start = round_index % len(names)
                yield names[start:] + names[:start]
            elif order == "shuffled":
                yield rng.sample(names, len(names))
            else:
                if round_index % len(rows) == 0:
                    labels = rng.sample(names, len(names))
                yield [labels[index] for index in rows[round_index % len(rows)]]
    return rounds()


def time_interleaved(torch, candidates, flush, target_s=0.3, min_reps=3, max_reps=20,
                     order="rotating", seed=0, run_log=None):
    """{name: fn} -> {name: summary}. The first timed round sizes each candidate's number of runs
    (a slow one, like the unfused path, stops after fewer rounds than a fast one; under
    `balanced` every candidate runs as many whole cycles as the one that wants most runs needs);
    every round runs each candidate that still needs runs, so the runs stay interleaved. With
    run_log (a list), each timed run is appended as {round, name, after (the call before it), ms,
    at (host seconds at its start)}."""
    names = list(candidates)
    if not names:
        return {}
    orders = round_orders(names, order, random.Random(seed))
    for name in names:  # warm-up: first-call setup (cuDNN plans, module loads) stays out of timing
        candidates[name]()
    torch.cuda.synchronize()
    times = {name: [] for name in names}
    wanted = dict.fromkeys(names, 1)  # the first round; it sizes the rest
    previous = names[-1]  # the last warm-up call
    for round_index, ordered in enumerate(orders):
        if all(round_index >= wanted[name] for name in names):
            break
        for name in ordered:
            if round_index >= wanted[name]:
                continue
            at = time.time()
            times[name].append(time_once(torch, candidates[name], flush))
            if run_log is not None:
                run_log.append({"round": round_index, "name": name, "after": previous,
                                "ms": times[name][-1], "at": at})
            previous = name
        if round_index == 0:
            wanted = {name: rounds_for(times[name][0], target_s, min_reps, max_reps)
                      for name in names}
            if order == "balanced":
                cycle = len(williams_rows(len(names)))
                wanted = dict.fromkeys(names, cycle * math.ceil(max(wanted.values()) / cycle))
    return {name: summarize(t) for name, t in times.items()}


def sustained_ms(torch, call, seconds):
    """The GPU at its power cap: `call` back to back for `seconds` (the host at most a few calls
    ahead), the ms a call over the second half by device events, when the clock has settled (on
    the H200 about a second of such work brings it down from its boost to the cap's)."""
    return sustained(torch, call, seconds)["ms"]


def sustained(torch, call, seconds, energy=None):
    """sustained_ms's run as {ms: a call's}, and with `energy` (an EnergyCounter) the joules a call
    and the mean watts over the timed half: at the power cap a call's time is its energy over the
    cap, so a candidate that needs more joules a call runs slower there."""
    settle_at = time.perf_counter() + seconds / 2
    end_at = time.perf_counter() + seconds
    while time.perf_counter() < settle_at:
        call()
        torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    runs = 0
    joules_before = energy.joules() if energy else None
    start.record()
    while time.perf_counter() < end_at:
        call()
        runs += 1
        if runs % 4 == 0:
            torch.cuda.synchronize()
    stop.record()
    stop.synchronize()
    result = {"ms": start.elapsed_time(stop) / runs}
    if energy:
        joules = energy.joules() - joules_before
        result.update(joules=joules / runs, watts=joules / (result["ms"] * runs * 1e-3))
    return result


class EnergyCounter:
    """The GPU's energy counter since the driver loaded (NVML's total energy, in mJ), read
    through the driver's own library so that nothing else need be installed. `index`: NVML's
    device index (PCI bus order: set CUDA_DEVICE_ORDER=PCI_BUS_ID to match CUDA's)."""

    def __init__(self, index=0):
        import ctypes
        self._ctypes = ctypes
        self._nvml = ctypes.CDLL("libnvidia-ml.so.1")
        if self._nvml.nvmlInit_v2() != 0:
            raise RuntimeError("nvmlInit_v2 failed")
        self._handle = ctypes.c_void_p()
        if self._nvml.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(self._handle)) != 0:
            raise RuntimeError(f"NVML has no device {index}")
        self.joules()  # a GPU without the counter fails here, not mid-run

    def joules(self):
        millijoules = self._ctypes.c_ulonglong()
        status = self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle,
                                                               self._ctypes.byref(millijoules))
        if status != 0:
            raise RuntimeError(f"nvmlDeviceGetTotalEnergyConsumption: status {status}")
        return millijoules.value / 1000.0
