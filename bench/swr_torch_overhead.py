"""Host overhead of one swr.torch.attention call over the bare kernel (a benchmark, not a test).

    PYTHONPATH=python SWR_RUNTIME_LIBRARY=build/lib/libswr_runtime.so \\
        python3 bench/swr_torch_overhead.py --catalog results.db --out overhead.json \\
        [--launch-benchmark build/bench/swr_launch_overhead]

At one shape (default B=16, H=8, S=777, D=64, f16, not causal), after the first call of the shape:
  kernel_us        the kernel alone: a CUDA graph of `--calls` captured calls replayed, device
                   events around the replay, divided by the calls (no host work in between);
  host_us          the host's time per swr.torch.attention call: perf_counter around `--calls`
                   calls enqueued back to back (the GPU queue does not fill: calls x kernel time
                   stays well under what it holds), then one synchronisation outside the timing;
  c_launch_us      the same for the runtime's prepared launch alone (swr.Catalog.attention_launch
                   called on tensors allocated once): what swr.torch adds is host_us - c_launch_us;
  c_floor_us       the same for the bare ctypes call of swr_launch_attention with integers made
                   beforehand (workspace 0: the runtime's pooled tile counter, as swr.torch
                   passes): the C side and one foreign call, the least a binding over the C ABI
                   can cost;
  c_floor_zeroed_us  the same with a zeroed counter of the caller's per call
                   (SWR_WORKSPACE_ZEROED): no pool;
  sdpa_host_us     the same for torch's scaled_dot_product_attention (FlashAttention-2 backend)
                   on the same inputs, for scale;
  eager_device_us  device events around `--calls` eager swr.torch calls, per call: equal to
                   kernel_us when the host keeps ahead of the GPU, larger when it does not.
  host_<path>_us   host_us through each hot path of swr.torch that is there ("compiled", the C
                   extension, and "python"; swr.torch.hot_path says which one host_us took, as
                   $SWR_HOT_PATH chose), interleaved with the others in the same process.
Each figure is the median over `--repeats` repetitions (the host figures interleaved: each
repetition times each of them in turn); `host_overhead_us` = host_us (the time a call holds the
Python thread), reported beside kernel_us and the 10 us target.
`c_side_us` (with --launch-benchmark): the C side timed from C++, no Python (swr_launch_overhead:
swr_launch_attention, and the driver calls it is made of, each alone).
`split_us`: host_us cut into python (host_us - c_floor_us: swr.torch's own work), ctypes (c_floor_us
- c_side launch_us: the foreign call and its argument conversion) and c_side (launch_us).
`breakdown_us`: the pieces of one call timed alone in a loop (medians), where the Python time goes,
with two other ways to allocate the output (empty: torch.empty of its shape, dtype and device;
new_empty) for comparison.
"""
import argparse
import json
import statistics
import subprocess
import sys
import time

import swr_runtime


def median_per_call(repeats, calls, measure):
    return statistics.median(measure() / calls for _ in range(repeats))


def host_seconds(torch, call, calls):
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        call()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed


def device_seconds(torch, run):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    run()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3


def breakdown(torch, q, k, v, causal, catalog, calls, loops=2000, repeats=15):
    """us per piece of one swr.torch.attention call, each timed alone in a loop (medians; each
    loop adds a lambda call of its own: the "nothing" piece). Pieces that launch the kernel loop
    `calls` times, with the queue drained between repetitions, as host_us does."""
    import swr.torch as entry
    def call_key():  # what the hot path keys its runners by (swr/_hotpath.py, Hot.attention)
        return (q.shape, k.shape, v.shape, q.dtype, k.dtype, v.dtype, q.device, k.device,
                v.device, causal, None, "error", catalog, False)

    runners = entry._hot.attention_runners
    runner = runners[call_key()]
    launch = runner.launch
    out = torch.empty_like(q)
    shape, dtype, device = q.shape, q.dtype, q.device
    pointers = (launch.handle, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), 0, 0,
                entry._raw_stream(0))
    pieces = {
        "nothing": lambda: None,
        "is_compiling": lambda: torch.compiler.is_compiling(),
        "key": call_key,
        "key_and_lookup": lambda: runners[call_key()],
        "is_contiguous_x3": lambda: (q.is_contiguous(), k.is_contiguous(), v.is_contiguous()),
        "empty_like": lambda: torch.empty_like(q),
        "empty": lambda: torch.empty(shape, dtype=dtype, device=device),
        "new_empty": lambda: q.new_empty(shape),
        "data_ptr_x4": lambda: (q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr()),
        "current_device": lambda: entry._current_device(),
        "raw_stream": lambda: entry._raw_stream(0),
        "capturing": lambda: entry._capturing(),
    }
    launching = {
        "runner_run": lambda: runner(q, k, v),  # everything after the lookup, the C call too
        "hot_path_call": lambda: entry._eager_attention(q, k, v, causal, None, "error", catalog,
                                                         False),
        "c_call": lambda: launch.function(*pointers),
    }
    figures = {}
    for name, piece in list(pieces.items()) + list(launching.items()):
        count = calls if name in launching else loops

        def run():
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(count):
                piece()
            return time.perf_counter() - start
        figures[name] = statistics.median(run() for _ in range(repeats)) / count * 1e6
    torch.cuda.synchronize()
    return figures


def c_side(program, catalog_path, shape, dtype, causal, calls, repeats):
    """The figures of swr_launch_overhead (bench/launch_overhead.cpp) at the same shape."""
    command = [program, str(catalog_path), "x".join(map(str, shape)), dtype]
    command += (["causal"] if causal else []) + ["--calls", str(calls), "--repeats", str(repeats)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        return {"error": f"{' '.join(command)}: exit {result.returncode}: {result.stderr.strip()}"}
    return json.loads(result.stdout)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--catalog", required=True, help="results database or export directory")
    parser.add_argument("--shape", default="16x8x777x64", help="BxHxSxD")
    parser.add_argument("--dtype", default="f16", choices=["f16", "bf16"])
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--out", help="JSON file for the figures")
    parser.add_argument("--launch-benchmark",
                        help="swr_launch_overhead (build/bench/), for the C side alone")
    args = parser.parse_args(argv)
    try:
        batch, heads, seq, head_dim = (int(x) for x in args.shape.split("x"))
    except ValueError:
        print(f"swr_torch_overhead: bad shape '{args.shape}': allowed BxHxSxD, e.g. 16x8x777x64",
              file=sys.stderr)
        return 2

    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    entry = swr_runtime.torch_entry()
    catalog = swr_runtime.open_catalog(args.catalog)
    dtype = torch.float16 if args.dtype == "f16" else torch.bfloat16
    q, k, v = (torch.randn(batch, heads, seq, head_dim, device="cuda", dtype=dtype)
               for _ in range(3))
    answer = entry.explain(q, k, v, is_causal=args.causal, catalog=catalog)
    if answer["runs"] != "swr":
        print(f"swr_torch_overhead: swr does not serve this shape: {answer.get('why_not_swr')}",
              file=sys.stderr)
        return 1

    def swr_call():
        return entry.attention(q, k, v, is_causal=args.causal, fallback="error", catalog=catalog)

    out = torch.empty_like(q)
    launch = catalog.attention_launch(batch, heads, seq, head_dim, args.dtype, args.causal,
                                      gpu=answer["gpu"])
    stream = torch.cuda.current_stream().cuda_stream

    def c_call():
        launch(q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), 0, 0, stream=stream)

    function = launch.function
    pointers = (launch.handle, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), 0, 0,
                stream)
    counters = torch.zeros(args.calls, dtype=torch.int32, device="cuda")

    def c_floor_call():
        function(*pointers)

    def c_floor_zeroed_seconds():
        """As c_floor_call with a zeroed counter per call (SWR_WORKSPACE_ZEROED): no pool."""
        counters.zero_()
        torch.cuda.synchronize()
        handle, qp, kp, vp, op = pointers[:5]
        base = counters.data_ptr()
        start = time.perf_counter()
        for i in range(args.calls):
            function(handle, qp, kp, vp, op, base + 4 * i, 1, stream)
        elapsed = time.perf_counter() - start
        torch.cuda.synchronize()
        return elapsed

    def sdpa_call():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v,
                                                                    is_causal=args.causal)

    # First calls: lookups, module loads, plans.
    for call in (swr_call, c_call, sdpa_call, c_floor_call):
        call()
    torch.cuda.synchronize()

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        swr_call()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(args.calls):
            swr_call()
    graph.replay()
    torch.cuda.synchronize()

    def eager_run():
        for _ in range(args.calls):
            swr_call()

    n, r = args.calls, args.repeats
    default_path = entry.hot_path

    def through(path):
        """host_us with the calls through the hot path `path`, then back to the default."""
        def measure():
            entry._use_hot_path(path)
            try:
                return host_seconds(torch, swr_call, n)
            finally:
                entry._use_hot_path(default_path)
        return measure

    hot_paths = [path for path in ("compiled", "python")
                 if path == "python" or entry._hotpath.compiled() is not None]
    for path in hot_paths:  # each hot path's first call of the shape
        through(path)()
    host_figures = {  # interleaved: each repetition times each of them in turn
        "host_us": lambda: host_seconds(torch, swr_call, n),
        **{f"host_{path}_us": through(path) for path in hot_paths},
        "c_launch_us": lambda: host_seconds(torch, c_call, n),
        "c_floor_us": lambda: host_seconds(torch, c_floor_call, n),
        "c_floor_zeroed_us": c_floor_zeroed_seconds,
        "sdpa_host_us": lambda: host_seconds(torch, sdpa_call, n),
    }
    samples = {name: [] for name in host_figures}
    for _ in range(r):
        for name, measure in host_figures.items():
            samples[name].append(measure() / n)
    figures = {name: statistics.median(values) * 1e6 for name, values in samples.items()}
    figures["kernel_us"] = median_per_call(r, n, lambda: device_seconds(torch, graph.replay)) * 1e6
    figures["eager_device_us"] = median_per_call(
        r, n, lambda: device_seconds(torch, eager_run)) * 1e6
    figures["host_overhead_us"] = figures["host_us"]
    document = {"shape": {"batch": batch, "heads": heads, "seq": seq, "head_dim": head_dim,
                          "dtype": args.dtype, "causal": args.causal},
                "device": torch.cuda.get_device_name(), "torch": torch.__version__,
                "hot_path": default_path, "python": sys.version.split()[0],
                "swr": {k: answer.get(k) for k in ("match", "variant", "distance", "tuned_shape")},
                "calls": n, "repeats": r, "figures_us": figures, "target_us": 10.0,
                "breakdown_us": breakdown(torch, q, k, v, args.causal, catalog, n)}
    if args.launch_benchmark:
        c_figures = c_side(args.launch_benchmark, args.catalog, (batch, heads, seq, head_dim),
                           args.dtype, args.causal, n, r)
        document["c_side_us"] = c_figures
        if "launch_us" in c_figures:
            document["split_us"] = {
                "python": figures["host_us"] - figures["c_floor_us"],
                "ctypes": figures["c_floor_us"] - c_figures["launch_us"],
                "c_side": c_figures["launch_us"]}
    text = json.dumps(document, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
