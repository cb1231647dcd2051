# prof.py BENCH_DIR swr|fa4 POINT...: STEPS training steps (default 1) of each point by one
# candidate of bench/training_step.py, after two warm-up steps, each between cudaProfilerStart and
# Stop (for ncu --profile-from-start off), against the catalog at $CATALOG (default
# /tmp/swr-peers/catalog.db). Also run by ../registers-and-host-2026-11-27/prof2.sh (STEPS=3).
import os, sys, torch
sys.path.insert(0, sys.argv[1])  # bench/
import training_step as ts
which = sys.argv[2]; points = sys.argv[3:]
steps_profiled = int(os.environ.get("STEPS", "1"))
catalog_path = os.environ.get("CATALOG", "/tmp/swr-peers/catalog.db")
torch_, swr_torch, dtype, catalog, props, flush = ts.gpu_session("bf16", catalog_path)
for text in points:
    point = ts.parse_point(text)
    step = ts.candidates(torch, swr_torch, catalog, point, dtype)[which]
    if isinstance(step, str): print(which, step); continue
    q, k, v, grad = ts.inputs(torch, point, dtype)
    for _ in range(2): step(q, k, v, grad)
    torch.cuda.synchronize()
    for _ in range(steps_profiled):
        torch.cuda.profiler.start(); step(q, k, v, grad); torch.cuda.synchronize(); torch.cuda.profiler.stop()
    if which == "swr":
        explained = swr_torch.explain(q, k, v, is_causal=point["causal"], catalog=catalog)
        print("variant", text, explained["backward"]["variant"], flush=True)
    print("profiled", which, text, flush=True)
