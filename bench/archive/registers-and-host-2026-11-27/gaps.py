"""GPU idle gaps inside one flushed step, and where the host spends a call (diagnostic)."""
import cProfile, pstats, io, sys
sys.path.insert(0, sys.argv[1])
import torch, training_step as ts
from torch.profiler import profile, ProfilerActivity
_, swr_torch, _, cat, props, flush = ts.gpu_session("bf16", sys.argv[2])


def host_profile(fn, calls, lead_cycles):
    """cProfile of `calls` calls of fn, the GPU kept busy by a spin kernel so that none waits."""
    for _ in range(3): fn()
    torch.cuda.synchronize()
    torch.cuda._sleep(lead_cycles)
    pr = cProfile.Profile(); pr.enable()
    for _ in range(calls): fn()
    pr.disable(); torch.cuda.synchronize()
    s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25); print(s.getvalue()[:6000], flush=True)


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
    # the forward under grad, then the whole step (forward + autograd.grad)
    host_profile(fwds["swr"], 30, int(4e8))
    host_profile(lambda: steps["swr"](q, k, v, grad), 10, int(8e8))
