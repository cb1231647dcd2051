"""Where the step's forward spends its time: kernel or host (diagnostic, registers-and-host-2026-11-27).

    python3 host.py BENCH_DIR CATALOG POINT [POINT ...]   (BENCH_DIR: the staged bench/)
"""
import statistics, sys, time, json
sys.path.insert(0, sys.argv[1])  # bench dir of the staged package
import torch, device_timing, training_step as ts
_, swr_torch, _, cat, props, flush = ts.gpu_session("bf16", sys.argv[2])
out = {"device": props.name, "points": {}}
LEAD = int(4e6)
for name in sys.argv[3:]:
    p = ts.parse_point(name)
    q, k, v, grad = ts.inputs(torch, p, torch.bfloat16)
    gqa = p["kv_heads"] != p["heads"]
    steps = ts.candidates(torch, swr_torch, cat, p, torch.bfloat16)
    fwds = ts.forward_calls(swr_torch, cat, p, q, k, v)
    qc, kc, vc = (t.detach().contiguous() for t in (q, k, v))
    calls = {
        "swr fwd grad": fwds["swr"],
        "swr fwd nograd": lambda: swr_torch.attention(q.detach(), k.detach(), v.detach(), is_causal=p["causal"], enable_gqa=gqa, fallback="error", catalog=cat),
        "swr fwd nograd bhsd": lambda: swr_torch.attention(qc, kc, vc, is_causal=p["causal"], enable_gqa=gqa, fallback="error", catalog=cat),
        "swr step": lambda: steps["swr"](q, k, v, grad),
        "cudnn fwd": fwds["cudnn"],
        "cudnn step": lambda: steps["cudnn"](q, k, v, grad),
    }
    res = {}
    for c, fn in calls.items():
        for _ in range(3): fn()
        torch.cuda.synchronize()
        r = {}
        for lead in (0, LEAD):
            t = [device_timing.time_once(torch, fn, flush, lead) for _ in range(12)]
            r[f"lead{lead}"] = statistics.median(t)
        # host enqueue time with the GPU busy
        hs = []
        for _ in range(12):
            torch.cuda._sleep(int(2e7)); t0 = time.perf_counter(); fn(); hs.append(time.perf_counter() - t0)
            torch.cuda.synchronize()
        r["host_ms"] = statistics.median(hs) * 1e3
        res[c] = r
        print(f"{name:28s} {c:22s} lead0 {r['lead0']:.3f} lead {r[f'lead{LEAD}']:.3f} host {r['host_ms']:.3f}", flush=True)
    # kernels of one swr step
    from torch.profiler import profile, ProfilerActivity
    for c in ("swr fwd grad", "swr step"):
        flush(); torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
            calls[c](); torch.cuda.synchronize()
        ks = [(e.name[:70], e.device_time_total/1e3) for e in prof.events() if e.device_type.name == "CUDA"]
        res[c + " kernels"] = ks
        print(c, "kernels:", json.dumps(ks), flush=True)
    ex = swr_torch.explain(q, k, v, is_causal=p["causal"], enable_gqa=gqa, catalog=cat)
    res["tuner_fwd_ms"] = ex["measured"]["median_ms"]; res["tuner_bwd_ms"] = ex["backward"]["measured"]["median_ms"]
    res["variants"] = [ex["variant"], ex["backward"]["variant"]]
    print(name, "tuner fwd", res["tuner_fwd_ms"], "bwd", res["tuner_bwd_ms"], res["variants"], flush=True)
    out["points"][name] = res
    del q, k, v, grad, qc, kc, vc
json.dump(out, open("/tmp/diag.json", "w"), indent=1)
