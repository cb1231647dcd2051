#!/usr/bin/env bash
# Issue 12's acceptance in one device call on a lent H200: tune each point of S in {4096, 16384,
# 131072} x D in {64, 128} x causal/not over the whole space of both paths (mma_sync and wgmma)
# into one results database, then, as a separate step, let the runtime choose swr's variant per
# point from that database and time it against cuDNN and FlashAttention-2 (PyTorch SDPA),
# interleaved, same inputs, same L2 flush (bench/attention_vs_pytorch.py through swr.torch).
#
# Each point has its own B*H, chosen so that every peer's run takes >= 1 ms (flops are
# 4*B*H*S^2*D, halved for causal; about 1.1e12 per short point, 2.2-8.8e12 at S=131072 where
# B=H=1 already gives more). The tuner's time is bounded by its own --time-budget, shared out
# over the points in proportion to an estimate of each tune (EST below, seconds, from the
# session-5 full tune: ~26 ms per variant plus ~27 kernel runs per timed variant). Each tune
# passes the point's whole space (`swr-tune space` on this machine) as --config keys, wgmma
# first: the same variants, in an order where the tuner's own stop rule (a variant slower than
# 1.25x the best so far gets one timed run) can act on the mma_sync variants once a wgmma one is
# measured. bf16 D=128 points are tuned and benchmarked afterwards, each only if its estimate
# fits in what is left.
#
# Run from the repository root on the device: OUT=$OUT D=.device/NAME TOTAL=520 bash \
#   .device/NAME/bench/tuned_attention_device_run.sh
# ($D holds bin/swr-tune, bin/libswr_runtime.so, bench/*.py and python/swr.) SEED_DB=path starts
# from an earlier call's database: the same tune commands then resume, measuring only the
# variants a time budget left out. Everything under $OUT ends up in $OUT/all.tar.gz (the lent
# machine sends back only a few files).
set -uo pipefail
D=${D:-.device/attn-bench-12}
OUT=${OUT:-/tmp/attn-bench-12-out}
TOTAL=${TOTAL:-520}     # seconds for the whole script
BENCH_S=${BENCH_S:-70}  # kept back for each head-to-head
BF16=${BF16:-1}
BIN=$(cd "$D/bin" && pwd)
BENCH=$(cd "$D/bench" && pwd)
mkdir -p "$OUT/logs" "$OUT/keys"
export SWR_CACHE_DIR=/tmp/swr-tuned-bench/cubins XDG_CACHE_HOME=/tmp/swr-tuned-bench/cache
export HOME=/tmp/swr-tuned-bench/home
mkdir -p "$HOME"
export PYTHONPATH="$D/python" SWR_RUNTIME_LIBRARY="$BIN/libswr_runtime.so"
DB="$OUT/tuned.db"
[[ -n ${SEED_DB:-} ]] && cp "$SEED_DB" "$DB"
START=$SECONDS
left() { echo $((TOTAL - (SECONDS - START))); }
note() { echo "$*" | tee -a "$OUT/steps.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv \
  > "$OUT/gpu.txt" 2>&1
date -u +%Y-%m-%dT%H:%M:%SZ > "$OUT/started_at.txt"

# point (BxHxSxD-mask) and estimated tune seconds
FP16_POINTS=(
  "32x16x4096x64-causal 31" "16x16x4096x64-noncausal 29"
  "16x16x4096x128-causal 25" "8x16x4096x128-noncausal 24"
  "2x16x16384x64-causal 29" "1x16x16384x64-noncausal 28"
  "1x16x16384x128-causal 24" "1x8x16384x128-noncausal 23"
  "1x1x131072x64-causal 22" "1x1x131072x64-noncausal 38"
  "1x1x131072x128-causal 25" "1x1x131072x128-noncausal 47"
)
BF16_POINTS=(
  "16x16x4096x128-causal 25" "8x16x4096x128-noncausal 24"
  "1x16x16384x128-causal 24" "1x8x16384x128-noncausal 23"
  "1x1x131072x128-causal 25" "1x1x131072x128-noncausal 47"
)

# tune POINT DTYPE BUDGET_SECONDS: the point's whole space, wgmma keys first.
tune() {
  local point=$1 dtype=$2 budget=$3
  local dims=${point%-*} mask=${point#*-}
  local b h s d
  IFS=x read -r b h s d <<< "$dims"
  local name="${point}-${dtype}"
  local args=(--gpu h200 --batch "$b" --heads "$h" --seq "$s" --head-dim "$d" --dtype "$dtype")
  [[ $mask == causal ]] && args+=(--causal)
  "$BIN/swr-tune" space "${args[@]}" --json > "$OUT/keys/$name.json" 2> "$OUT/logs/space_$name.err"
  python3 -c '
import json, sys
keys = [c["key"] for c in json.load(open(sys.argv[1]))["configs"]]
print("\n".join([k for k in keys if k.startswith("wgmma")] +
                [k for k in keys if not k.startswith("wgmma")]))' "$OUT/keys/$name.json" \
    > "$OUT/keys/$name.txt"
  local configs=() key
  while read -r key; do [[ -n $key ]] && configs+=(--config "$key"); done < "$OUT/keys/$name.txt"
  local t0=$SECONDS rc
  "$BIN/swr-tune" tune "${args[@]}" --db "$DB" --time-budget "$budget" "${configs[@]}" \
    > "$OUT/logs/tune_$name.log" 2>&1
  rc=$?
  if ((rc == 2)); then  # a key this device prunes: tune the space in the tuner's own order
    note "tune $name: --config refused ($(tail -1 "$OUT/logs/tune_$name.log")); plain space"
    "$BIN/swr-tune" tune "${args[@]}" --db "$DB" --time-budget "$budget" \
      > "$OUT/logs/tune_$name.log" 2>&1
    rc=$?
  fi
  note "tune $name: $((${#configs[@]} / 2)) keys, budget ${budget}s, rc=$rc," \
    "$((SECONDS - t0))s: $(grep -E '^measured ' "$OUT/logs/tune_$name.log" | tail -1)"
}

# fp16: every point, the tuning time shared out in proportion to the estimates.
TUNE_END=$((TOTAL - BENCH_S))
remaining_estimate=0
for entry in "${FP16_POINTS[@]}"; do remaining_estimate=$((remaining_estimate + ${entry#* })); done
FP16_SPECS=()
for entry in "${FP16_POINTS[@]}"; do
  point=${entry% *} estimate=${entry#* }
  window=$((TUNE_END - (SECONDS - START)))
  budget=$((window * estimate / remaining_estimate))
  ((budget < 5)) && budget=5
  tune "$point" f16 "$budget"
  remaining_estimate=$((remaining_estimate - estimate))
  FP16_SPECS+=("$point")
done

bench() {  # bench DTYPE POINT...
  local dtype=$1; shift
  local limit
  limit=$(left)
  ((limit > 150)) && limit=150
  timeout "$limit" python3 "$BENCH/attention_vs_pytorch.py" --gpu h200 --catalog "$DB" \
    --dtype "$dtype" --points "$@" --min-rounds 10 --max-rounds 30 --target-seconds 1.0 \
    --out "$OUT/bench-$dtype" > "$OUT/logs/bench_$dtype.log" 2>&1
  note "bench $dtype: rc=$? ($(left)s left)"
}
bench f16 "${FP16_SPECS[@]}"

BF16_SPECS=()
if ((BF16)); then
  for entry in "${BF16_POINTS[@]}"; do
    point=${entry% *} estimate=${entry#* }
    window=$(($(left) - BENCH_S))
    if ((window < estimate * 13 / 10)); then
      note "bf16 $point: not tuned (estimate ${estimate}s, ${window}s left before the bench)"
      continue
    fi
    budget=$((estimate * 2))
    ((budget > window)) && budget=$window
    tune "$point" bf16 "$budget"
    BF16_SPECS+=("$point")
  done
  if ((${#BF16_SPECS[@]} > 0)); then bench bf16 "${BF16_SPECS[@]}"; fi
fi

"$BIN/swr-tune" show --gpu h200 --db "$DB" > "$OUT/logs/show.txt" 2>&1
date -u +%Y-%m-%dT%H:%M:%SZ > "$OUT/finished_at.txt"
note "total $((SECONDS - START))s"
cat "$OUT/steps.txt"
for dtype in f16 bf16; do
  [[ -f $OUT/logs/bench_$dtype.log ]] && tail -16 "$OUT/logs/bench_$dtype.log"
done
tar -C "$OUT" -czf /tmp/swr-tuned-bench/all.tar.gz . && mv /tmp/swr-tuned-bench/all.tar.gz "$OUT/"
find "$OUT" -mindepth 1 -maxdepth 1 ! -name all.tar.gz ! -name steps.txt -exec rm -rf {} +
exit 0
