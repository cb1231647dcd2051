"""Per-piece host cost of swr.torch's training forward (diagnostic)."""
import sys, time
sys.path.insert(0, sys.argv[1])
import torch, training_step as ts
_, st, _, cat, _, _ = ts.gpu_session("bf16", sys.argv[2])
p = ts.parse_point(sys.argv[3])
q, k, v, grad = ts.inputs(torch, p, torch.bfloat16)
out0 = st.attention(q, k, v, is_causal=p["causal"], fallback="error", catalog=cat)
call = next(iter(v_ for v_ in st._training_calls.values() if v_ is not None))
fw = call.forward
views = [st._kernel_view(t) for t in (q, k, v)]
o = torch.empty(q.shape, dtype=q.dtype, device=q.device)
lse = torch.empty(st._lse_shape(q), dtype=torch.float32, device=q.device)
layout = st.attention_strides(views[0][1], views[1][1], views[2][1], o.stride())
ws = torch.empty(1, dtype=torch.int32, device=q.device)
N = 300
def bench(name, fn, n=N):
    torch.cuda.synchronize(); torch.cuda._sleep(int(3e9))
    fn()
    t0 = time.perf_counter()
    for _ in range(n): fn()
    dt = (time.perf_counter() - t0) / n * 1e6
    torch.cuda.synchronize()
    print(f"{name:40s} {dt:8.1f} us", flush=True)
bench("attention(grad) total", lambda: st.attention(q, k, v, is_causal=p["causal"], fallback="error", catalog=cat), 100)
bench("run_forward direct", lambda: call.run_forward(q, k, v), 100)
bench("3x _kernel_view", lambda: [st._kernel_view(t) for t in (q, k, v)])
bench("torch.empty out", lambda: torch.empty(q.shape, dtype=q.dtype, device=q.device))
bench("torch.empty lse", lambda: torch.empty(st._lse_shape(q), dtype=torch.float32, device=q.device))
bench("torch.empty(1) counter", lambda: torch.empty(1, dtype=torch.int32, device=q.device))
bench("attention_strides", lambda: st.attention_strides(views[0][1], views[1][1], views[2][1], o.stride()))
bench("_raw_stream", lambda: st._raw_stream(0))
bench("_on_launch_device", lambda: st._on_launch_device(0))
bench("call_with_lse (launch)", lambda: fw.launch.call_with_lse(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr(), layout, ws.data_ptr() if fw.dynamic_workspace else 0, 0, st._raw_stream(0)), 100)
bench("call_with_lse contiguous-None", lambda: fw.launch.call_with_lse(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr(), None, ws.data_ptr() if fw.dynamic_workspace else 0, 0, st._raw_stream(0)), 100)
bench("data_ptr x5", lambda: (q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr()))
bench("are_deterministic + grad_enabled", lambda: (torch.are_deterministic_algorithms_enabled(), torch.is_grad_enabled()))
class Id(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v):
        ctx.save_for_backward(q, k, v, o, lse); return o.view_as(o)
    @staticmethod
    def backward(ctx, g): return g, None, None
bench("empty autograd.Function.apply", lambda: Id.apply(q, k, v))
bench("sdpa cudnn fwd (grad)", lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=p["causal"]), 100)
