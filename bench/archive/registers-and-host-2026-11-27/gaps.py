"""GPU idle gaps inside one flushed step, and where the host spends a call (diagnostic)."""
import cProfile, pstats, io, statistics, sys, time, json
sys.path.insert(0, sys.argv[1])
import torch, device_timing, training_step as ts
import swr.torch as swr_torch, swr
from torch.profiler import profile, ProfilerActivity
cat = swr.Catalog(sys.argv[2])
props = torch.cuda.get_device_properties(0)
flush = device_timing.L2Flush(torch, props.L2_cache_size)
for name in sys.argv[3:]:
    p = ts.parse_point(name)
    q, k, v, grad = ts.inputs(torch, p, torch.bfloat16)
    steps = ts.candidates(torch, swr_torch, cat, p, torch.bfloat16)
    fwds = ts.forward_calls(swr_torch, cat, p, q, k, v)
    for c, fn in (("swr step", lambda: steps["swr"](q, k, v, grad)), ("cudnn step", lambda: steps["cudnn"](q, k, v, grad))):
        for _ in range(3): fn()
        torch.cuda.synchronize()
        for rep in range(2):
            flush(); torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
                flush(); fn(); torch.cuda.synchronize()
            ev = sorted([e for e in prof.events() if e.device_type.name == "CUDA"], key=lambda e: e.time_range.start)
            line = []
            prev = None
            for e in ev:
                s, t = e.time_range.start, e.time_range.end
                line.append(f"{'' if prev is None else f'[gap {(s-prev)/1e3:.3f}] '}{e.name[:40]} {(t-s)/1e3:.3f}")
                prev = t
            print(name, c, rep, " | ".join(line), flush=True)
    # host profile of the forward under grad, GPU kept busy
    fn = fwds["swr"]
    for _ in range(3): fn()
    torch.cuda.synchronize()
    torch.cuda._sleep(int(4e8))
    pr = cProfile.Profile(); pr.enable()
    for _ in range(30): fn()
    pr.disable(); torch.cuda.synchronize()
    s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25); print(s.getvalue()[:6000], flush=True)
    # the whole step's host (forward + autograd.grad), GPU busy
    fn = lambda: steps["swr"](q, k, v, grad)
    torch.cuda._sleep(int(8e8))
    pr = cProfile.Profile(); pr.enable()
    for _ in range(10): fn()
    pr.disable(); torch.cuda.synchronize()
    s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25); print(s.getvalue()[:6000], flush=True)
