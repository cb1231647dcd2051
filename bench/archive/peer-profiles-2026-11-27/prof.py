# prof.py BENCH_DIR swr|fa4 POINT...: one training step of each point by one candidate of
# bench/training_step.py, after two warm-up steps, between cudaProfilerStart and Stop (for
# ncu --profile-from-start off).
import sys, torch
sys.path.insert(0, sys.argv[1])  # bench/
import training_step as ts
which = sys.argv[2]; points = sys.argv[3:]
torch_, swr_torch, dtype, catalog, props, flush = ts.gpu_session("bf16", "/tmp/swr-peers/catalog.db")
for text in points:
    point = ts.parse_point(text)
    step = ts.candidates(torch, swr_torch, catalog, point, dtype)[which]
    if isinstance(step, str): print(which, step); continue
    q, k, v, grad = ts.inputs(torch, point, dtype)
    for _ in range(2): step(q, k, v, grad)
    torch.cuda.synchronize()
    torch.cuda.profiler.start(); step(q, k, v, grad); torch.cuda.synchronize(); torch.cuda.profiler.stop()
    print("profiled", which, text, flush=True)
