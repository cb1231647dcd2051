"""swr's cubins inside a PyTorch process: compiled by `swr-tune compile --out DIR`, loaded and
launched through the CUDA driver (ctypes) in PyTorch's own context, on PyTorch's tensors and stream.

A cubin fixes only the head dim, dtype and causal flag besides the config
(generator/kernel_source.cpp): batch, heads and sequence lengths are launch arguments, so one
cubin per (config, head dim, dtype, causal) serves every shape of the grid.
"""
import ctypes
import json
import math
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


class Driver:
    """The few CUDA driver calls needed to run a cubin inside PyTorch's context."""

    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")

    def check(self, result, call):
        if result != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorString(result, ctypes.byref(text))
            raise RuntimeError(f"{call} failed: {text.value.decode() if text.value else result}")

    def load(self, cubin_path, entry, dynamic_shared_bytes):
        module = ctypes.c_void_p()
        with open(cubin_path, "rb") as f:
            image = f.read()
        self.check(self.lib.cuModuleLoadData(ctypes.byref(module), image), "cuModuleLoadData")
        function = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(function), module, entry.encode()),
                   "cuModuleGetFunction")
        self.check(self.lib.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                               dynamic_shared_bytes), "cuFuncSetAttribute")
        return module, function

    def occupancy(self, function, threads, dynamic_shared_bytes):
        blocks = ctypes.c_int()
        self.check(self.lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            ctypes.byref(blocks), function, threads, ctypes.c_size_t(dynamic_shared_bytes)),
            "cuOccupancyMaxActiveBlocksPerMultiprocessor")
        return blocks.value

    def launch(self, function, grid, threads, dynamic_shared_bytes, stream, arguments):
        storage = [a for a in arguments]
        pointers = (ctypes.c_void_p * len(storage))(
            *[ctypes.cast(ctypes.byref(a), ctypes.c_void_p) for a in storage])
        self.check(self.lib.cuLaunchKernel(function, grid, 1, 1, threads, 1, 1, dynamic_shared_bytes,
                                           ctypes.c_void_p(stream), pointers, None), "cuLaunchKernel")


class SwrVariant:
    """One attention cubin, launched like the tuner launches it (runtime/attention_launcher.cpp)."""

    def __init__(self, driver, directory, entry, kernel, sm_count):
        self.driver = driver
        self.key = kernel["key"]
        self.config = kernel["config"]
        self.threads = kernel["threads"]
        self.shared = kernel["dynamic_shared_bytes"]
        self.persistence = self.config["persistence"]
        self.block_m = self.config["block_m"]
        _, self.function = driver.load(os.path.join(directory, kernel["file"]), entry, self.shared)
        self.wave = driver.occupancy(self.function, self.threads, self.shared) * sm_count

    def run(self, q, k, v, o, counter, causal):
        import torch

        b, h, s_q, d = q.shape
        s_kv = k.shape[2]
        tiles = (s_q + self.block_m - 1) // self.block_m * b * h
        grid = tiles if self.persistence == "grid" else min(tiles, self.wave)
        if self.persistence == "dynamic":
            counter.zero_()
        arguments = [ctypes.c_void_p(q.data_ptr()), ctypes.c_void_p(k.data_ptr()),
                     ctypes.c_void_p(v.data_ptr()), ctypes.c_void_p(o.data_ptr()),
                     ctypes.c_int(b), ctypes.c_int(h), ctypes.c_int(s_q), ctypes.c_int(s_kv),
                     ctypes.c_float(math.log2(math.e) / math.sqrt(d)),
                     ctypes.c_void_p(counter.data_ptr()), ctypes.c_int(self.wave)]
        self.driver.launch(self.function, grid, self.threads, self.shared,
                           torch.cuda.current_stream().cuda_stream, arguments)


def problem_arguments(gpu, batch, heads, seq, head_dim, dtype, causal):
    return (["--gpu", gpu, "--batch", str(batch), "--heads", str(heads), "--seq", str(seq),
             "--head-dim", str(head_dim), "--dtype", dtype] + (["--causal"] if causal else []))


class CompileRequest:
    """Config keys to compile for one problem (a shape whose space holds all of them)."""

    def __init__(self, shape, directory):
        self.shape = shape  # (batch, heads, seq, head_dim, dtype, causal)
        self.directory = directory
        self.keys = set()

    def command(self, swr_tune, gpu, jobs):
        command = [swr_tune, "compile", "--jobs", str(jobs), "--out", self.directory]
        command += problem_arguments(gpu, *self.shape)
        for key in sorted(self.keys):
            command += ["--config", key]
        return command


def compile_split(requests, jobs):
    """(requests run at once, NVRTC jobs each): most requests hold one or two keys."""
    parallel = max(1, min(len(requests), jobs))
    return parallel, max(1, math.ceil(jobs / parallel))


def compile_all(swr_tune, gpu, requests, jobs=16):
    """Runs every request's `swr-tune compile` (several at once) and returns
    {(head_dim, dtype, causal, key): (directory, entry, kernel) or an error text}."""
    parallel, jobs_each = compile_split(requests, jobs)

    def run(request):
        os.makedirs(request.directory, exist_ok=True)
        done = subprocess.run(request.command(swr_tune, gpu, jobs_each), capture_output=True,
                              text=True)
        return request, done

    kernels = {}
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        for request, done in pool.map(run, requests):
            head_dim, dtype, causal = request.shape[3:]
            manifest_path = os.path.join(request.directory, "kernels.json")
            manifest = None
            if os.path.exists(manifest_path):
                with open(manifest_path) as f:
                    manifest = json.load(f)
            compiled = {k["key"]: k for k in manifest["kernels"]} if manifest else {}
            problem_text = (done.stderr.strip().splitlines() or ["no output"])[-1]
            for key in request.keys:
                if key in compiled:
                    kernels[(head_dim, dtype, causal, key)] = (request.directory, manifest["entry"],
                                                               compiled[key])
                else:
                    kernels[(head_dim, dtype, causal, key)] = (
                        f"swr-tune compile failed (exit {done.returncode}): {problem_text}")
    return kernels
