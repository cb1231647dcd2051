"""bench/training_host_share.py and device_timing without a GPU: time_once's lead (the spin kernel
enqueued after the L2 flush and before the start event, never without a lead); sustained's joules a
call; per candidate and call, the median of each way and idle - device as the exposed host time; a
candidate that refuses the point reported with its reason, the others still timed.
Run: python3 -m unittest discover -s tests/report -p 'test_*.py'
"""
import os
import sys
import types
import unittest
from unittest import mock

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPOSITORY, "bench"))

import device_timing  # noqa: E402
import training_host_share  # noqa: E402


class RecordingTorch:
    """torch.cuda's events, spin kernel and synchronize, each call written to `calls`."""

    def __init__(self):
        self.calls = []
        outer = self

        class Event:
            def __init__(self, enable_timing=False):
                outer.calls.append("new event")

            def record(self):
                outer.calls.append("record")

            def synchronize(self):
                outer.calls.append("event synchronize")

            def elapsed_time(self, end):
                return 1.5

        self.cuda = types.SimpleNamespace(
            Event=Event, _sleep=lambda cycles: self.calls.append(f"sleep {cycles}"),
            synchronize=lambda: self.calls.append("synchronize"))


class TimeOnceLead(unittest.TestCase):
    def test_the_spin_kernel_comes_between_the_flush_and_the_start_event(self):
        torch = RecordingTorch()
        flush = lambda: torch.calls.append("flush")  # noqa: E731
        call = lambda: torch.calls.append("call")  # noqa: E731
        self.assertEqual(device_timing.time_once(torch, call, flush, lead_cycles=1000), 1.5)
        self.assertEqual(torch.calls, ["flush", "sleep 1000", "new event", "new event", "record",
                                       "call", "record", "event synchronize"])

    def test_no_spin_kernel_without_a_lead(self):
        torch = RecordingTorch()
        device_timing.time_once(torch, lambda: None, lambda: None)
        self.assertFalse([c for c in torch.calls if c.startswith("sleep")])


class SustainedEnergy(unittest.TestCase):
    """device_timing.sustained: the joules read around the timed half only (not the settling
    half), over the calls in it; watts from those joules and the events' time."""

    def test_joules_a_call_over_the_timed_half(self):
        torch = RecordingTorch()  # every pair of events: 1.5 ms apart
        clock = iter(range(1000))
        calls, calls_at_reads = [], []
        readings = iter([100.0, 130.0])  # before and after the timed half

        class Counter:
            def joules(self):
                calls_at_reads.append(len(calls))
                return next(readings)

        # Each perf_counter() call advances one second: the settling half ends at 4 s, the run at
        # 9 s.
        with mock.patch.object(device_timing.time, "perf_counter",
                               side_effect=lambda: float(next(clock))):
            result = device_timing.sustained(torch, lambda: calls.append(1), 8.0, Counter())
        settling, timed = calls_at_reads[0], calls_at_reads[1] - calls_at_reads[0]
        self.assertEqual((settling, timed, len(calls)), (2, 4, 6))
        self.assertAlmostEqual(result["ms"], 1.5 / timed)
        self.assertAlmostEqual(result["joules"], 30.0 / timed)
        self.assertAlmostEqual(result["watts"], 30.0 / 1.5e-3)

    def test_without_a_counter_only_the_time(self):
        torch = RecordingTorch()
        clock = iter(range(1000))
        with mock.patch.object(device_timing.time, "perf_counter",
                               side_effect=lambda: float(next(clock))):
            self.assertEqual(set(device_timing.sustained(torch, lambda: None, 8.0)), {"ms"})


class RunPoint(unittest.TestCase):
    def test_medians_exposed_time_and_a_refusing_candidate(self):
        torch = RecordingTorch()

        def refusing_forward():
            raise RuntimeError("no tuned kernel for this shape\nmore detail")

        steps = {"swr": lambda q, k, v, grad: None, "cudnn": lambda q, k, v, grad: None,
                 "fa4": "unavailable: No module named 'flash_attn'"}
        forwards = {"swr": lambda: None, "cudnn": refusing_forward}
        # Idle runs (no lead) take 3 ms, device-only runs (a lead) 2 ms; the host 0.5 ms.
        def fake_time_once(torch_, fn, flush, lead_cycles=0):
            fn()
            return 2.0 if lead_cycles else 3.0

        with mock.patch.object(training_host_share.training_step, "candidates",
                               return_value=steps), \
                mock.patch.object(training_host_share.training_step, "inputs",
                                  return_value=(1, 2, 3, 4)), \
                mock.patch.object(training_host_share.training_step, "forward_calls",
                                  return_value=forwards), \
                mock.patch.object(training_host_share.device_timing, "time_once",
                                  side_effect=fake_time_once), \
                mock.patch.object(training_host_share, "host_ms", return_value=0.5):
            rows = training_host_share.run_point(torch, None, None, {"name": "p"}, "bf16",
                                                 lambda: None, runs=1, lead_cycles=7)
        by = {(row["candidate"], row.get("call")): row for row in rows}
        self.assertEqual(by[("fa4", None)]["status"], "unavailable: No module named 'flash_attn'")
        self.assertEqual(by[("cudnn", None)]["status"],
                         "refused: no tuned kernel for this shape")
        self.assertEqual({key for key in by if key[0] == "swr"}, {("swr", "fwd"),
                                                                  ("swr", "fwd+bwd")})
        for call in ("fwd", "fwd+bwd"):
            row = by[("swr", call)]
            self.assertEqual(row["status"], "ok")
            self.assertEqual((row["idle_ms"], row["device_ms"], row["host_ms"]), (3.0, 2.0, 0.5))
            self.assertAlmostEqual(row["exposed_host_ms"], 1.0)


if __name__ == "__main__":
    unittest.main()
