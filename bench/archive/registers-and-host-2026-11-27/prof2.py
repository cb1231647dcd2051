# prof2.py BENCH_DIR CATALOG swr|fa4 POINT...: three training steps of each point by one candidate,
# each between cudaProfilerStart/Stop (ncu --profile-from-start off), after two warm-ups.
import sys, torch
sys.path.insert(0, sys.argv[1])
import training_step as ts
catalog_path, which, points = sys.argv[2], sys.argv[3], sys.argv[4:]
torch_, swr_torch, dtype, catalog, props, flush = ts.gpu_session("bf16", catalog_path)
for text in points:
    point = ts.parse_point(text)
    step = ts.candidates(torch, swr_torch, catalog, point, dtype)[which]
    if isinstance(step, str): print(which, step); continue
    q, k, v, grad = ts.inputs(torch, point, dtype)
    for _ in range(2): step(q, k, v, grad)
    torch.cuda.synchronize()
    for _ in range(3):
        torch.cuda.profiler.start(); step(q, k, v, grad); torch.cuda.synchronize(); torch.cuda.profiler.stop()
    if which == "swr":
        e = swr_torch.explain(q, k, v, is_causal=point["causal"], catalog=catalog)
        print("variant", text, e["backward"]["variant"], flush=True)
    print("profiled", which, text, flush=True)
