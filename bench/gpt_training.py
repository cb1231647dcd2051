#!/usr/bin/env python3
"""A small GPT trained three times from the same initialisation and the same batches, attention
the only difference: swr (swr.torch.attention under autograd: swr's forward and backward kernels,
fallback="error" so nothing silently runs PyTorch's), SDPA's cuDNN backend, and SDPA's
FlashAttention-2 backend. Two correct bf16 implementations of the same maths differ by rounding
alone, so the cuDNN-vs-FA2 gap is the yardstick of "bf16 noise": swr passes when its gap to cuDNN
is no larger than twice that (mean |loss difference| over the last 100 steps, and the final
smoothed loss), and its step time is reported as a ratio to each.

The data teaches something attention must learn: each sequence is a random walk of a fixed sparse
Markov chain over the vocabulary whose second half repeats a random earlier span (a copy only
attention over distance can predict), drawn from a seeded generator, so every run sees the same
batches in the same order.

    python3 bench/gpt_training.py --catalog tuned.db --out gpt.json        # 300 steps x 3 runs
    python3 bench/gpt_training.py --steps 20 --layers 2 --catalog tuned.db  # a quick look
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

RUNS = ("swr", "cudnn", "flash")


class Block(nn.Module):
    def __init__(self, width, heads, attend):
        super().__init__()
        self.heads, self.attend = heads, attend
        self.norm_attention = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width, bias=False)
        self.project = nn.Linear(width, width, bias=False)
        self.norm_mlp = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * width, width))

    def forward(self, x):
        batch, seq, width = x.shape
        # [B, S, 3, H, D] -> three [B, H, S, D] strided views: what a projection hands attention.
        q, k, v = (self.qkv(self.norm_attention(x)).view(batch, seq, 3, self.heads, -1)
                   .permute(2, 0, 3, 1, 4).unbind(0))
        attended = self.attend(q, k, v)
        x = x + self.project(attended.transpose(1, 2).reshape(batch, seq, width))
        return x + self.mlp(self.norm_mlp(x))


class Gpt(nn.Module):
    def __init__(self, vocab, seq, width, heads, layers, attend):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.position = nn.Parameter(torch.randn(seq, width) * 0.02)
        self.blocks = nn.ModuleList(Block(width, heads, attend) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens) + self.position[: tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def attention_of(run, catalog):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    if run == "swr":
        import swr.torch

        def attend(q, k, v):
            return swr.torch.attention(q, k, v, is_causal=True, fallback="error", catalog=catalog)
        return attend
    backend = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}[run]

    def attend(q, k, v):
        with sdpa_kernel([backend]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return attend


class Batches:
    """The seeded data: a sparse Markov chain (each token has `fanout` successors) and a copied
    span in every sequence's second half."""

    def __init__(self, vocab, seq, batch, seed, device, fanout=4):
        self.vocab, self.seq, self.batch, self.device = vocab, seq, batch, device
        self.generator = torch.Generator(device=device).manual_seed(seed)
        chain = torch.Generator(device=device).manual_seed(seed + 1)
        self.successors = torch.randint(0, vocab, (vocab, fanout), generator=chain, device=device)

    def next(self):
        walk = torch.empty(self.batch, self.seq + 1, dtype=torch.long, device=self.device)
        walk[:, 0] = torch.randint(0, self.vocab, (self.batch,), generator=self.generator,
                                   device=self.device)
        choices = torch.randint(0, self.successors.shape[1], (self.batch, self.seq),
                                generator=self.generator, device=self.device)
        for position in range(self.seq):
            walk[:, position + 1] = self.successors[walk[:, position], choices[:, position]]
        half = (self.seq + 1) // 2
        span = half // 2
        start = torch.randint(0, half - span, (self.batch,), generator=self.generator,
                              device=self.device)
        rows = torch.arange(self.batch, device=self.device)[:, None]
        columns = start[:, None] + torch.arange(span, device=self.device)[None, :]
        walk[:, half:half + span] = walk[rows, columns]
        return walk[:, :-1], walk[:, 1:]


def train(run, args, initial_state, catalog):
    device = torch.device("cuda")
    model = Gpt(args.vocab, args.seq, args.width, args.heads, args.layers,
                attention_of(run, catalog)).to(device)
    model.load_state_dict(initial_state)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95),
                                  weight_decay=0.1, fused=True)
    data = Batches(args.vocab, args.seq, args.batch, args.seed, device)
    step_fn = model
    if args.compile:
        step_fn = torch.compile(model, fullgraph=True)
    losses, times = [], []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for step in range(args.steps):
        tokens, targets = data.next()
        warm = min(10, args.steps // 10)
        lr = args.lr * min(1.0, (step + 1) / warm) if warm else args.lr
        for group in optimizer.param_groups:
            group["lr"] = lr
        start.record()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = step_fn(tokens)
        loss = F.cross_entropy(logits.float().view(-1, args.vocab), targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        end.record()
        end.synchronize()
        losses.append(loss.item())
        times.append(start.elapsed_time(end))
        if step % 50 == 0 or step == args.steps - 1:
            print(f"  {run} step {step:4d} loss {losses[-1]:.4f} {times[-1]:.1f} ms", flush=True)
    return {"losses": losses, "step_ms": times}


def smoothed_final(losses, window=20):
    return statistics.fmean(losses[-window:])


def gap(a, b, last=100):
    return statistics.fmean(abs(x - y) for x, y in zip(a[-last:], b[-last:]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--width", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--seq", type=int, default=2048)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument("--lr", type=float, default=6e-4)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--compile", action="store_true",
                        help="torch.compile(fullgraph=True) the model in every run")
    parser.add_argument("--runs", default=",".join(RUNS),
                        help=f"comma-separated, of {', '.join(RUNS)}")
    parser.add_argument("--catalog", help="swr's results database or export (default: swr's)")
    parser.add_argument("--out", help="JSON file for the curves, times and verdict")
    args = parser.parse_args()
    runs = args.runs.split(",")
    for run in runs:
        if run not in RUNS:
            print(f"gpt_training: --runs {run!r}: allowed {', '.join(RUNS)}", file=sys.stderr)
            return 2
    if args.steps < 1 or args.width % args.heads:
        print(f"gpt_training: --steps {args.steps} must be >= 1 and --width {args.width} a "
              f"multiple of --heads {args.heads}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("gpt_training: skipped: no CUDA device (torch.cuda.is_available() is False)")
        return 0
    catalog = None
    if args.catalog and "swr" in runs:
        import swr
        catalog = swr.Catalog(args.catalog)
    torch.manual_seed(args.seed)
    initial = Gpt(args.vocab, args.seq, args.width, args.heads, args.layers, None).state_dict()
    initial = {name: tensor.clone() for name, tensor in initial.items()}
    results = {"command": " ".join(sys.argv), "device": torch.cuda.get_device_name(),
               "torch": torch.__version__, "config": vars(args), "runs": {}}
    for run in runs:
        print(f"{run}:", flush=True)
        began = time.time()
        results["runs"][run] = train(run, args, initial, catalog)
        results["runs"][run]["wall_s"] = round(time.time() - began, 1)
    summary = {}
    skip = min(10, args.steps // 3)  # the first steps compile and warm caches
    for run, record in results["runs"].items():
        summary[run] = {"final_loss": round(smoothed_final(record["losses"]), 4),
                        "median_step_ms": round(statistics.median(record["step_ms"][skip:]), 2)}
    if {"swr", "cudnn"} <= set(runs):
        swr_runs, cudnn = results["runs"]["swr"], results["runs"]["cudnn"]
        summary["swr_vs_cudnn_mean_abs_gap"] = round(gap(swr_runs["losses"], cudnn["losses"]), 4)
        summary["step_time_ratio_swr_over_cudnn"] = round(
            summary["swr"]["median_step_ms"] / summary["cudnn"]["median_step_ms"], 3)
        if "flash" in runs:
            noise = gap(results["runs"]["flash"]["losses"], cudnn["losses"])
            summary["flash_vs_cudnn_mean_abs_gap"] = round(noise, 4)
            summary["step_time_ratio_swr_over_flash"] = round(
                summary["swr"]["median_step_ms"] / summary["flash"]["median_step_ms"], 3)
            final_gap = abs(summary["swr"]["final_loss"] - summary["cudnn"]["final_loss"])
            final_noise = abs(summary["flash"]["final_loss"] - summary["cudnn"]["final_loss"])
            summary["within_bf16_noise"] = bool(
                summary["swr_vs_cudnn_mean_abs_gap"] <= 2 * max(noise, 1e-3)
                and final_gap <= 2 * max(final_noise, 1e-3))
    summary["criterion"] = ("swr's mean |loss - cuDNN's loss| over the last 100 steps and its "
                            "final (20-step mean) loss gap each <= 2x the FA2-vs-cuDNN figure "
                            "(floor 1e-3)")
    results["summary"] = summary
    print(json.dumps(summary, indent=2))
    if args.out:
        with open(args.out, "w") as out:
            json.dump(results, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
