"""Pair-lag (the tuned pick) against its single-CTA twin in the four-candidate rotation."""
import sys, zlib, json, os
sys.path.insert(0, os.path.join(os.environ["HERE"], "bench"))
import device_timing, training_step as ts
import swr
point = ts.parse_point("1x16x32768x128-causal")
torch, swr_torch, dtype, _, props, flush = ts.gpu_session("bf16", None)
q, k, v, grad = ts.inputs(torch, point, dtype)
timed, out = {}, {"device": props.name, "runs": []}
for label, path in (("swr-pair", sys.argv[1]), ("swr-single", sys.argv[2])):
    cat = swr.Catalog(path)
    found = ts.candidates(torch, swr_torch, cat, point, dtype)
    ex = swr_torch.explain(q, k, v, is_causal=True, catalog=cat)
    print(label, ex["backward"].get("variant"), "error", ts.check(torch, found["swr"], point, dtype), flush=True)
    timed[label + " fwd+bwd"] = lambda s=found["swr"]: s(q, k, v, grad)
    if label == "swr-pair":
        fw = ts.forward_calls(swr_torch, cat, point, q, k, v)
        peers = found
for name in ("fa4", "cudnn", "flash2"):
    timed[name + " fwd+bwd"] = lambda s=peers[name]: s(q, k, v, grad)
for name in ("swr", "fa4", "cudnn", "flash2"):
    timed[name + " fwd"] = fw[name]
for r in (1, 2):
    log = []
    s = device_timing.time_interleaved(torch, timed, flush, target_s=0.5, order="balanced", seed=r, run_log=log)
    out["runs"].append({"summaries": s, "log": log})
    fa4 = s["fa4 fwd+bwd"]["median_ms"]
    for n in ("swr-pair fwd+bwd", "swr-single fwd+bwd", "fa4 fwd+bwd", "cudnn fwd+bwd"):
        print(r, f"{n:20} {s[n]['median_ms']:8.3f} ms  fa4/this {fa4 / s[n]['median_ms']:.3f}", flush=True)
json.dump(out, open(os.path.join(os.environ["OUT"], "pair-vs-single.json"), "w"), indent=1)
