"""One GEMM point: cuBLAS (torch.matmul) and swr's variant as the runtime chose it from the catalog,
called through swr.torch as a user calls it (swr_runtime.py), on the same inputs, checked against cuBLAS
first (a wrong answer is reported, never timed), then timed together, interleaved, with the same
L2 flush (device_timing).
"""
import device_timing
from attention_peers import first_line, relative_error

GEMM_TOLERANCE = {"f16": 1e-2, "bf16": 2e-2}


class GemmBench:
    def __init__(self, torch, flush, timing):
        self.torch, self.flush, self.timing = torch, flush, timing

    def run(self, point, swr):
        """swr: {"call": (a, b) -> a call of swr.torch.matmul}, or {"status", "note"} when
        swr does not run this point. Returns {candidate: result}."""
        torch = self.torch
        dtype = torch.float16 if point.dtype == "f16" else torch.bfloat16
        a = torch.randn(point.m, point.k, device="cuda", dtype=dtype)
        b = torch.randn(point.k, point.n, device="cuda", dtype=dtype)
        results = {}
        reference = torch.matmul(a, b)
        calls = {"cublas": lambda: torch.matmul(a, b)}
        if swr.get("call") is not None:
            call = swr["call"](a, b)
            try:
                c = call()
                torch.cuda.synchronize()
                error = relative_error(torch, c, reference)
                if error < GEMM_TOLERANCE[point.dtype]:
                    calls["swr"] = call
                    results["swr"] = {"relative_error": error}
                else:
                    results["swr"] = {"status": "wrong", "relative_error": error,
                                      "note": f"relative error {error:.2e} against cuBLAS"}
            except RuntimeError as error:
                results["swr"] = {"status": "failed", "note": first_line(error)}
        else:
            results["swr"] = {"status": swr["status"], "note": swr["note"]}
        try:
            timed = device_timing.time_interleaved(torch, calls, self.flush, **self.timing)
        except RuntimeError as error:  # the point fails alone
            for name in calls:
                results[name] = {"status": "failed", "note": "while timing: " + first_line(error)}
            return results
        for name, summary in timed.items():
            results.setdefault(name, {}).update(summary, status="ok",
                                                tflops=point.flops() / summary["median_ms"] / 1e9)
        del a, b, reference
        return results
