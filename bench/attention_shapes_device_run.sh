#!/usr/bin/env bash
# Issue 16 on an H200 in one device call (~8 min): the attention shapes real models use (GQA/MQA,
# head dims 32..256, BSHD strides, bottom-right causal) on both instruction paths.
#
#   bench/attention_shapes_device_run.sh stage [BUILD_DIR] [DEST]   # build machine: the stripped
#       GPU test programs, swr-tune and libswr_runtime.so, python/swr and bench/*.py packed into
#       DEST/bin.tar.xz, this script as DEST/run.sh (DEST: .device/attention-shapes)
#   cd DEST && OUT=... bash run.sh                                  # GPU machine
#
# run.sh, every step with its own time limit, none past $TOTAL seconds, every exit code logged:
#   1. Correctness (~190 s, the four programs at once: the GPU is shared, nothing here is timed):
#      attention_kernel_gpu_test (mma.sync: every knob; every head dim 32..256, fp16 and bf16, on
#      GQA/MQA, BSHD and BHSD, both causal alignments with S_q < S_kv and S_q = S_kv, odd lengths,
#      against the fp64 CPU reference), attention_wgmma_gpu_test (the same on the wgmma path),
#      attention_reference_gpu_test (the GPU reference with K/V heads, strides and the shift) and
#      runtime_gpu_test (a GQA bottom-right problem on strided tensors through swr::Attention and
#      the C API's prepared launch).
#   2. Tunes (the GPU alone): per point its whole space (both paths) with --time-budget into one
#      database, fp16, causal: Llama-3-like GQA (32 query heads over 8 K/V heads, D=128) and D=256,
#      at S = 8192, 32768, 131072. Head-groups variants and their head_major twins go first, so the
#      S=131072 GQA tune measures both whatever its budget leaves out.
#   3. bench/attention_vs_pytorch.py on that database: the runtime's choice per point (chosen
#      before timing) against SDPA's FlashAttention-2 and cuDNN backends (enable_gqa=True),
#      interleaved, same inputs, same L2 flush.
#   Last: the summary (also $OUT/summary.txt): test counts, ratios, and the L2 misses (tuner's
#   CUPTI counters) of the best GQA-aware grouping against plain head_major at S=131072.
set -uo pipefail

if [[ ${1:-} == stage ]]; then
  build=${2:-build}
  dest=${3:-.device/attention-shapes}
  source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  rm -rf "$dest" && mkdir -p "$dest/pack/bin" "$dest/pack/lib" "$dest/pack/bench"
  for program in swr-tune tests/gpu/attention_kernel_gpu_test tests/gpu/attention_wgmma_gpu_test \
    tests/gpu/attention_reference_gpu_test tests/gpu/runtime_gpu_test examples/swr_attention_example \
    examples/swr_gemm_example; do
    cp "$build/$program" "$dest/pack/bin/" && strip "$dest/pack/bin/$(basename "$program")"
  done
  cp -L "$build/lib/libswr_runtime.so" "$dest/pack/lib/libswr_runtime.so"
  strip "$dest/pack/lib/libswr_runtime.so"
  (cd "$source_dir" && git ls-files python/swr) | while read -r f; do
    mkdir -p "$dest/pack/$(dirname "$f")" && cp "$source_dir/$f" "$dest/pack/$f"
  done
  cp "$source_dir"/bench/*.py "$dest/pack/bench/"
  git -C "$source_dir" rev-parse HEAD > "$dest/pack/COMMIT"
  tar -C "$dest/pack" -cJf "$dest/bin.tar.xz" . && rm -rf "$dest/pack"
  cp "${BASH_SOURCE[0]}" "$dest/run.sh"
  du -sh "$dest"
  exit 0
fi

D=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:-$D/out}
TOTAL=${TOTAL:-470}
BENCH_S=${BENCH_S:-100}
W=/tmp/swr-attention-shapes
rm -rf "$W" && mkdir -p "$W/logs" "$W/keys" "$W/home" "$W/cubins" "$OUT"
tar -C "$W" -xJf "$D/bin.tar.xz"
BIN="$W/bin"
export PYTHONUNBUFFERED=1 SWR_RUNTIME_LIBRARY="$W/lib/libswr_runtime.so" PYTHONPATH="$W/python"
export SWR_CACHE_DIR="$W/cubins" HOME="$W/home" XDG_CACHE_HOME="$W/xdg" SWR_TUNE_PATH="$BIN/swr-tune"
export SWR_EXAMPLE_PATH="$BIN/swr_attention_example" SWR_GEMM_EXAMPLE_PATH="$BIN/swr_gemm_example"
export SWR_SOURCE_DIR="$(cd "$D/../.." && pwd)"
START=$SECONDS
left() { echo $((TOTAL - (SECONDS - START))); }
note() { echo "$*" | tee -a "$W/logs/steps.txt"; }
counts() {  # counts LOG: "passed=N failed=M" from a gtest log
  local passed failed
  passed=$(grep -c '^\[       OK \]' "$1" || true)
  failed=$(grep -c '^\[  FAILED  \] .*(' "$1" || true)
  echo "passed=$passed failed=$failed"
}
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'
  echo "commit $(cat "$W/COMMIT")"; } > "$W/logs/env.txt" 2>&1

# 1. Correctness, the four programs at once.
CORRECTNESS_S=190
t0=$SECONDS
timeout $CORRECTNESS_S "$BIN/attention_kernel_gpu_test" > "$W/logs/kernel_gpu.log" 2>&1 &
timeout $CORRECTNESS_S "$BIN/attention_wgmma_gpu_test" > "$W/logs/wgmma_gpu.log" 2>&1 &
timeout $CORRECTNESS_S "$BIN/attention_reference_gpu_test" > "$W/logs/reference_gpu.log" 2>&1 &
timeout $CORRECTNESS_S "$BIN/runtime_gpu_test" > "$W/logs/runtime_gpu.log" 2>&1 &
for name in kernel_gpu wgmma_gpu reference_gpu runtime_gpu; do
  wait -n
done
wait
for name in kernel_gpu wgmma_gpu reference_gpu runtime_gpu; do
  done_line=$(grep -c '^\[==========\] .* ran\.' "$W/logs/$name.log" || true)
  note "$name: $(counts "$W/logs/$name.log")$([[ $done_line == 0 ]] && echo ' (cut by the time limit)')"
done
note "correctness: $((SECONDS - t0))s"

# 2. Tunes: point (BxHxSxD[-kvN]-mask) and its budget in seconds.
POINTS=(
  "1x32x131072x128-kv8-causal 35" "1x32x8192x128-kv8-causal 15" "1x32x32768x128-kv8-causal 20"
  "1x16x8192x256-causal 15" "1x16x32768x256-causal 20" "1x8x131072x256-causal 30"
)
DB="$W/tuned.db"
# Per head dim, the variants measured first (what led the H200's earlier wgmma tunes, with a
# head-groups twin at D=128), so that short budgets measure them whatever else they leave out.
declare -A FIRST=(
  [128]="wgmma-m192n128s2-cyclic-grid-head_major wgmma-m192n128s2-cyclic-grid-groups4
         wgmma-m192n128s2-sawtooth-dynamic-head_major wgmma-m192n128s2-sawtooth-dynamic-groups4
         wgmma-m128n192s2-ov-cyclic-grid-head_major wgmma-m128n192s2-ov-pp-cyclic-grid-head_major
         wgmma-m192n128s2-evl-cyclic-grid-head_major wgmma-m128n176s2-ov-cyclic-grid-head_major"
  [256]="wgmma-m128n80s2-ov-pp-cyclic-grid-head_major wgmma-m128n80s2-ov-cyclic-grid-head_major
         wgmma-m128n64s2-ov-pp-cyclic-grid-head_major wgmma-m128n80s2-ov-pp-cyclic-dynamic-head_major
         wgmma-m128n80s2-ov-cyclic-dynamic-head_major wgmma-m128n80s2-ov-pp-evl-cyclic-grid-head_major")
tune() {  # tune POINT BUDGET
  local point=$1 budget=$2
  local dims=${point%%-*} mask=${point##*-} kv=""
  [[ $point == *-kv* ]] && kv=${point#*-kv} && kv=${kv%%-*}
  local b h s d
  IFS=x read -r b h s d <<< "$dims"
  local args=(--gpu h200 --batch "$b" --heads "$h" --seq "$s" --head-dim "$d" --dtype f16)
  [[ -n $kv ]] && args+=(--kv-heads "$kv")
  [[ $mask == causal ]] && args+=(--causal)
  "$BIN/swr-tune" space "${args[@]}" --json > "$W/keys/$point.json" 2> "$W/logs/space_$point.err"
  python3 - "$W/keys/$point.json" "${FIRST[$d]}" > "$W/keys/$point.txt" <<'PYTHON'
import json, sys
keys = [c["key"] for c in json.load(open(sys.argv[1]))["configs"]]
first = [k for k in sys.argv[2].split() if k in keys]  # the tiles that led on the H200 before
grouped = [k for k in keys if "-groups" in k]
grouped = [k for k in grouped if k.startswith("wgmma")] + [k for k in grouped if not k.startswith("wgmma")]
for g in grouped:
    twin = g.rsplit("-", 1)[0] + "-head_major"
    first += [k for k in (g, twin) if k in keys and k not in first]
rest = [k for k in keys if k not in first]
print("\n".join(first + [k for k in rest if k.startswith("wgmma")]
                + [k for k in rest if not k.startswith("wgmma")]))
PYTHON
  local configs=() key
  while read -r key; do [[ -n $key ]] && configs+=(--config "$key"); done < "$W/keys/$point.txt"
  local t1=$SECONDS rc
  timeout $((budget + 60)) "$BIN/swr-tune" tune "${args[@]}" --db "$DB" --time-budget "$budget" \
    -j 16 "${configs[@]}" > "$W/logs/tune_$point.log" 2>&1
  rc=$?
  note "tune $point: $((${#configs[@]} / 2)) keys, budget ${budget}s, rc=$rc, $((SECONDS - t1))s:" \
    "$(grep -E '^measured ' "$W/logs/tune_$point.log" | tail -1)"
  "$BIN/swr-tune" show "${args[@]}" --db "$DB" --json > "$W/keys/show_$point.json" 2>/dev/null
}
SPECS=()
for entry in "${POINTS[@]}"; do
  point=${entry% *} budget=${entry#* }
  window=$(($(left) - BENCH_S - 30))
  ((budget > window)) && budget=$window
  if ((budget < 10)); then
    note "tune $point: skipped (${window}s left before the bench)"
    continue
  fi
  tune "$point" "$budget"
  SPECS+=("$point")
done

# 3. Head to head with SDPA's backends.
limit=$(left)
((limit > BENCH_S + 20)) && limit=$((BENCH_S + 20))
if ((${#SPECS[@]} > 0 && limit > 20)); then
  timeout "$limit" python3 "$W/bench/attention_vs_pytorch.py" --gpu h200 --catalog "$DB" \
    --dtype f16 --points "${SPECS[@]}" --min-rounds 10 --max-rounds 30 --target-seconds 1.0 \
    --out "$W/bench_out" > "$W/logs/bench.log" 2>&1
  note "bench: rc=$? ($(left)s left)"
else
  note "bench: skipped (${limit}s left)"
fi

python3 - "$W" <<'PYTHON' > "$OUT/summary.txt" 2>&1
import glob, json, os, sys
w = sys.argv[1]
print(open(os.path.join(w, "logs", "env.txt")).read().rstrip())
print(open(os.path.join(w, "logs", "steps.txt")).read().rstrip())
for name in ("kernel_gpu", "wgmma_gpu", "reference_gpu", "runtime_gpu"):
    failed = [line.strip() for line in open(os.path.join(w, "logs", name + ".log"), errors="replace")
              if line.startswith("[  FAILED  ]") and "(" in line]
    for line in failed[:15]:
        print(f"{name}: {line}")
try:
    points = json.load(open(os.path.join(w, "bench_out", "results.json")))["points"]
except (OSError, ValueError) as error:
    points = []
    print(f"no bench results ({error})")
print(f"\n{'point':44s} {'swr variant':50s} {'swr TF/s':>8s} {'/FA2':>6s} {'/cuDNN':>7s}")
for p in points:
    c = p["candidates"]
    swr = c.get("swr", {})
    def ratio(peer):
        other = c.get(peer, {})
        if swr.get("status") == "ok" and other.get("status") == "ok":
            return f"{other['median_ms'] / swr['median_ms']:.3f}"
        return other.get("status", "-") if swr.get("status") == "ok" else swr.get("status", "-")
    tflops = f"{swr['tflops']:.0f}" if swr.get("tflops") else "-"
    print(f"{p['describe']:44s} {str(swr.get('config')):50s} {tflops:>8s} {ratio('flash2'):>6s} "
          f"{ratio('cudnn'):>7s}")
for path in sorted(glob.glob(os.path.join(w, "keys", "show_*131072x128-kv8*.json"))):
    try:
        variants = json.load(open(path))["results"][0]["variants"]
    except (OSError, ValueError, IndexError, KeyError) as error:
        print(f"\n{path}: {error}")
        continue
    ok = [v for v in variants if v.get("status") == "ok" and v.get("l2_sector_misses")]
    def best(swizzle):
        chosen = [v for v in ok if v["config_key"].split("-")[-1].startswith(swizzle)]
        return min(chosen, key=lambda v: v["median_ms"]) if chosen else None
    grouped, plain = best("groups"), best("head_major")
    print("\nL2 misses at S=131072 (GQA 32/8, D=128, causal, f16), tuner counters:")
    for name, v in (("best GQA-aware grouping", grouped), ("best head_major", plain)):
        if v:
            print(f"  {name:24s} {v['config_key']:50s} {v['l2_sector_misses']:.4g} misses, "
                  f"{v['median_ms']:.3f} ms")
        else:
            print(f"  {name:24s} not measured")
    if grouped and plain:
        print(f"  grouping / head_major misses: "
              f"{grouped['l2_sector_misses'] / plain['l2_sector_misses']:.3f}")
PYTHON
cp "$DB" "$W/logs/" 2>/dev/null
cp -r "$W/keys" "$W/logs/" 2>/dev/null
cp -r "$W/bench_out" "$W/logs/" 2>/dev/null
tar -C "$W" -cJf "$OUT/logs.tar.xz" logs
cat "$OUT/summary.txt"
echo "total $((SECONDS - START))s"
