# kstep.py BENCH_DIR CATALOG ROUNDS POINT...: each candidate's training step (swr, fa4, cudnn), the
# L2 flushed before each, in rotating order for ROUNDS rounds, all under torch.profiler: every
# kernel's duration inside the step and the GPU's idle gaps, per candidate (medians).
import sys, statistics, collections, json
sys.path.insert(0, sys.argv[1])
import torch, training_step as ts
from torch.profiler import profile, ProfilerActivity
torch_, swr_torch, dtype, catalog, props, flush = ts.gpu_session("bf16", sys.argv[2])
rounds = int(sys.argv[3])
out = {}
for text in sys.argv[4:]:
    point = ts.parse_point(text)
    steps = ts.candidates(torch, swr_torch, catalog, point, dtype)
    names = [n for n in ("swr", "fa4", "cudnn") if not isinstance(steps.get(n), str)]
    q, k, v, grad = ts.inputs(torch, point, dtype)
    for n in names:
        for _ in range(2): steps[n](q, k, v, grad)
    torch.cuda.synchronize()
    order = []
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for r in range(rounds):
            for i in range(len(names)):
                n = names[(i + r) % len(names)]
                order.append(n)
                flush(); steps[n](q, k, v, grad); torch.cuda.synchronize()
    ev = sorted([e for e in prof.events() if e.device_type.name == "CUDA"], key=lambda e: e.time_range.start)
    segs, cur = [], None
    for e in ev:
        if "FillFunctor<int>" in e.name:  # the L2 flush (int32 zero_) opens each run
            cur = [e]; segs.append(cur)
        elif cur is not None:
            cur.append(e)
    if len(segs) != len(order):
        print(text, "segments", len(segs), "runs", len(order), [e.name[:60] for e in ev[:12]]); continue
    per = collections.defaultdict(lambda: collections.defaultdict(list))
    for n, seg in zip(order, segs):
        flush_end = seg[0].time_range.end
        prev = flush_end
        for j, e in enumerate(seg[1:]):
            per[n][f"{j}:gap"].append((e.time_range.start - prev) / 1e3)
            per[n][f"{j}:{e.name[:48]}"].append((e.time_range.end - e.time_range.start) / 1e3)
            prev = e.time_range.end
        per[n]["span"].append((prev - flush_end) / 1e3)
    res = {}
    for n in names:
        res[n] = {key: statistics.median(vals) for key, vals in per[n].items()}
        print(f"{text} {n:6s} span {res[n]['span']:.3f} ms | " + " | ".join(f"{key} {val:.3f}" for key, val in res[n].items() if key != "span" and (not key.endswith(':gap') or val > 0.01)), flush=True)
    out[text] = res
    del q, k, v, grad
json.dump(out, open("/tmp/kstep.json", "w"), indent=1)
