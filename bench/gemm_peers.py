"""One GEMM point: cuBLAS (torch.matmul) and, when a kernel directory lists swr GEMM cubins, the
fastest of them on the same inputs and with the same timing (device_timing).

swr's GEMM family is being built: until `swr-tune compile` writes GEMM kernels, the swr point is
reported as missing. A GEMM kernels.json is recognised by its problem having "m", "n", "k"; its
kernels are launched as runtime/gemm_launcher.cpp launches them: C[M,N] = A[M,K] B[K,N], row-major,
arguments (A, B, C, M, N, K, swizzle_axis, swizzle_group), one CTA per output tile (grid) or at
most one wave (static), and checked against cuBLAS before they are timed (a wrong one is
reported, never timed).
"""
import ctypes
import json
import os

import device_timing
from attention_peers import first_line, relative_error

GEMM_TOLERANCE = {"f16": 1e-2, "bf16": 2e-2}
SWIZZLE_ALONG_N, SWIZZLE_ALONG_M = 0, 1  # templates/gemm/block_swizzle.cuh


def swizzle_arguments(config):
    """(axis, group) as generator/gemm_swizzle.cpp's swizzle_launch computes them."""
    stride = config.get("swizzle_stride", 0)
    if stride <= 0:
        return SWIZZLE_ALONG_N, 0
    along_m = config.get("swizzle_axis") == "m"
    extent = config["block_m"] if along_m else config["block_n"]
    return (SWIZZLE_ALONG_M if along_m else SWIZZLE_ALONG_N), max(1, stride // extent)


def grid_size(point, config, wave):
    tiles = (-(-point.m // config["block_m"])) * (-(-point.n // config["block_n"]))
    return tiles if config.get("persistence", "grid") == "grid" else min(tiles, wave)


def load_gemm_manifests(directories):
    """[(directory, manifest)] of the kernel directories whose problem is a GEMM."""
    found = []
    for directory in directories or []:
        path = os.path.join(directory, "kernels.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            manifest = json.load(f)
        if {"m", "n", "k"} <= set(manifest.get("problem", {})):
            found.append((directory, manifest))
    return found


def gemm_kernels_for(point, manifests):
    for directory, manifest in manifests:
        problem = manifest["problem"]
        if (problem["m"], problem["n"], problem["k"], problem.get("dtype")) == (
                point.m, point.n, point.k, point.dtype):
            return directory, manifest
    return None


class GemmBench:
    def __init__(self, torch, driver, flush, timing, manifests, sm_count):
        self.torch, self.driver, self.flush, self.timing = torch, driver, flush, timing
        self.manifests, self.sm_count = manifests, sm_count

    def swr_calls(self, point, a, b, reference, results):
        found = gemm_kernels_for(point, self.manifests)
        if found is None:
            results["swr"] = {"status": "missing", "note": (
                "no swr GEMM kernels for this shape (give --gemm-kernels DIR from swr-tune compile)")}
            return {}
        directory, manifest = found
        torch = self.torch
        calls = {}
        for kernel in manifest["kernels"]:
            config = kernel["config"]
            try:
                shared = kernel["dynamic_shared_bytes"]
                _, function = self.driver.load(os.path.join(directory, kernel["file"]),
                                               manifest["entry"], shared)
                wave = self.driver.occupancy(function, kernel["threads"], shared) * self.sm_count
                c = torch.empty(point.m, point.n, device="cuda", dtype=a.dtype)
                grid = grid_size(point, config, wave)
                axis, group = swizzle_arguments(config)
                arguments = [ctypes.c_void_p(a.data_ptr()), ctypes.c_void_p(b.data_ptr()),
                             ctypes.c_void_p(c.data_ptr()), ctypes.c_int(point.m),
                             ctypes.c_int(point.n), ctypes.c_int(point.k), ctypes.c_int(axis),
                             ctypes.c_int(group)]
                call = lambda function=function, kernel=kernel, grid=grid, arguments=arguments: (
                    self.driver.launch(function, grid, kernel["threads"],
                                       kernel["dynamic_shared_bytes"],
                                       torch.cuda.current_stream().cuda_stream, arguments))
                call()
                torch.cuda.synchronize()
                if relative_error(torch, c, reference) < GEMM_TOLERANCE[point.dtype]:
                    calls["swr:" + kernel["key"]] = call
            except RuntimeError as error:
                results.setdefault("swr", {"status": "failed", "note": first_line(error)})
        if not calls and "swr" not in results:
            results["swr"] = {"status": "wrong", "note": "no swr GEMM kernel matched cuBLAS"}
        return calls

    def run(self, point):
        torch = self.torch
        dtype = torch.float16 if point.dtype == "f16" else torch.bfloat16
        a = torch.randn(point.m, point.k, device="cuda", dtype=dtype)
        b = torch.randn(point.k, point.n, device="cuda", dtype=dtype)
        results = {}
        reference = torch.matmul(a, b)
        calls = {"cublas": lambda: torch.matmul(a, b)}
        calls.update(self.swr_calls(point, a, b, reference, results))
        try:
            timed = device_timing.time_interleaved(torch, calls, self.flush, **self.timing)
        except RuntimeError as error:  # the point fails alone
            results["cublas"] = {"status": "failed", "note": "while timing: " + first_line(error)}
            return results
        swr_names = [n for n in timed if n.startswith("swr:")]
        if swr_names:  # the fastest swr variant stands for swr
            best = min(swr_names, key=lambda n: timed[n]["median_ms"])
            timed["swr"] = dict(timed[best], config=best[4:], variants_timed=len(swr_names))
        for name in ["cublas"] + (["swr"] if swr_names else []):
            results[name] = dict(timed[name], status="ok",
                                 tflops=point.flops() / timed[name]["median_ms"] / 1e9)
        del a, b, reference
        return results
