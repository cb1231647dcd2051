#!/usr/bin/env bash
# The Hopper paths (issues 12 and 13) checked again on the current kernels, in one device call on
# a lent H200 (~6 min): what earlier calls measured on kernels that have changed since.
#
#   bench/hopper_recheck_device_run.sh stage [BUILD_DIR] [DEST]   # build machine: stripped
#       swr-tune and the GPU test programs in DEST/bin, this script as DEST/run.sh
#       (DEST: .device/hopper-recheck)
#   OUT=$OUT bash DEST/run.sh                                      # GPU machine (nvidia-h200)
#
#   A (GPU shared, nothing timed): compute-sanitizer racecheck and synccheck on one attention
#     variant of every consumer mode (2 warpgroups plain, overlapped, pingponged, both; 3
#     warpgroups plain and overlapped), dynamic persistence and P through shared memory (the GPU
#     test's first shape), and on two pingpong GEMM variants (odd sizes).
#   B (alone): a full tune of B2 H16 S16384 D128 f16 over both instruction paths, timed, and its
#     re-run with everything measured (issue 12: under 5 minutes and 5 seconds).
#   C (alone): the squares' tuned variants of bench/results/gemm-wgmma-h200 head to head with
#     cuBLAS again (gemm_performance_gpu_test: launches in turn, each from a flushed L2).
#   D (alone): sawtooth/cyclic twins of wgmma variants at B=8, H=1 where one head's K/V exceeds
#     what one L2 partition keeps (D=128 S=65536, D=64 S=131072), tuner counters.
# Logs, the databases and steps.txt are packed into $OUT/all.tar.gz; steps.txt also stays beside.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [[ ${1:-} == stage ]]; then
  build=${2:-build}
  dest=${3:-.device/hopper-recheck}
  rm -rf "$dest" && mkdir -p "$dest/bin"
  for program in swr-tune tests/gpu/attention_wgmma_gpu_test tests/gpu/gemm_kernel_gpu_test \
    tests/gpu/gemm_performance_gpu_test; do
    strip -o "$dest/bin/$(basename "$program")" "$build/$program"
  done
  cp "$0" "$dest/run.sh"
  cp "$here/device_steps.sh" "$dest/"
  du -sh "$dest"
  exit 0
fi

OUT=${OUT:?OUT: where the results go}
W=$(mktemp -d /tmp/hopper-recheck.XXXXXX)
BIN=$here/bin
mkdir -p "$W/logs"
export SWR_CACHE_DIR=$W/cubins XDG_CACHE_HOME=$W/cache HOME=$W/home SWR_DB=
mkdir -p "$HOME"
STEPS=$W/steps.txt DEADLINE=${DEADLINE:-500}
source "$here/device_steps.sh"
SANITIZER=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$W/gpu.txt" 2>&1

# ---- A: sanitizers, in parallel ------------------------------------------------------------------
attention_cases=(
  wgmma_m192n128s2_cyclic_grid_head_major_d128_bf16              # 3 warpgroups
  wgmma_m192n128s3_ov_sawtooth_static_head_major_d64_f16         # 3 warpgroups, overlapped
  wgmma_m128n128s3_evl_cyclic_grid_groups2_d128_f16_causal       # 2, plain
  wgmma_m128n192s2_ov_cyclic_grid_head_major_d128_f16            # 2, overlapped
  wgmma_m128n160s3_pp_sawtooth_grid_head_major_d64_bf16          # 2, pingponged
  wgmma_m128n128s2_ov_pp_cyclic_grid_head_major_d128_f16         # 2, both
  wgmma_m128n128s2_ov_pp_sawtooth_dynamic_head_major_d128_f16_causal  # dynamic persistence
  wgmma_m128n128s2_ov_pp_psm_cyclic_grid_head_major_d128_bf16_causal  # P through shared memory
)
filter=$(printf '*MatchesReferenceThroughTheLauncher/%s:' "${attention_cases[@]}")
for tool in racecheck synccheck; do
  SWR_WGMMA_FIRST_SHAPE_ONLY=1 step "attention $tool" 200 "$W/logs/attention-$tool.log" \
    "$SANITIZER" --tool "$tool" --print-limit 20 "$BIN/attention_wgmma_gpu_test" \
    --gtest_filter="${filter%:}" &
  for c in wgmma_m64n256k64s4_pingpong_c2x2_static_swz0_f16 \
    wgmma_m128n128k64s4_pingpong_c1x1_dynamic_swz0_bf16; do
    step "gemm $tool $c" 200 "$W/logs/gemm-$tool-$c.log" "$SANITIZER" --tool "$tool" \
      --print-limit 20 "$BIN/gemm_kernel_gpu_test" --gtest_filter="*MatchesReferenceOnOddSizes/$c" &
  done
done
wait
for log in "$W"/logs/attention-*.log "$W"/logs/gemm-*.log; do
  echo "$(basename "$log"): $(grep -hE 'RACECHECK SUMMARY|ERROR SUMMARY' "$log" | tr '\n' ' ')" \
    "$(grep -hE '^\[  (PASSED|FAILED)  \]' "$log" | tr '\n' ' ')" >> "$STEPS"
done

# ---- B: a full tune of one shape over both paths, then its re-run ------------------------------
shape=(--gpu h200 --batch 2 --heads 16 --seq 16384 --head-dim 128 --db "$W/full.db")
step "full tune" 280 "$W/logs/full_tune.log" "$BIN/swr-tune" "${shape[@]}"
step "full tune re-run" 30 "$W/logs/full_tune_rerun.log" "$BIN/swr-tune" "${shape[@]}"
for log in full_tune full_tune_rerun; do
  echo "$log: $(grep -E '^measured|everything' "$W/logs/$log.log" | tail -1)" >> "$STEPS"
done

# ---- C: the squares' tuned variants against cuBLAS ---------------------------------------------
squares="4096,4096,4096,f16,wgmma-m128n256k64s3-cooperative-c1x1-static-swzn1536"
squares+=";4096,4096,4096,bf16,wgmma-m128n256k64s3-cooperative-c1x1-static-swzn1536"
squares+=";8192,8192,8192,f16,wgmma-m128n256k64s3-cooperative-c1x1-static-swzn1024"
squares+=";8192,8192,8192,bf16,wgmma-m128n256k64s3-cooperative-c1x1-static-swzn1536"
squares+=";16384,16384,16384,f16,wgmma-m128n256k64s3-cooperative-c1x1-static-swzn512"
squares+=";16384,16384,16384,bf16,wgmma-m128n256k64s3-cooperative-c1x1-static-swzn512"
SWR_GEMM_HEAD_TO_HEAD=$squares step "gemm squares head to head" 90 "$W/logs/gemm_squares.log" \
  "$BIN/gemm_performance_gpu_test" --gtest_filter='*ChosenVariantsHeadToHeadWithCublas'
grep -E "head to head" "$W/logs/gemm_squares.log" | head -20 >> "$STEPS"

# ---- D: sawtooth/cyclic twins past the L2 -------------------------------------------------------
for pair in "128 65536 wgmma-m128n128s2-ov-pp" "64 131072 wgmma-m192n128s2"; do
  read -r d s base <<< "$pair"
  args=()
  for order in cyclic sawtooth; do
    for persistence in grid static dynamic; do
      args+=(--config "$base-$order-$persistence-head_major")
    done
  done
  step "twins d$d s$s" 60 "$W/logs/twins_d$d.log" "$BIN/swr-tune" --gpu h200 --batch 8 \
    --heads 1 --seq "$s" --head-dim "$d" --db "$W/twins.db" "${args[@]}"
done
"$BIN/swr-tune" show --gpu h200 --db "$W/twins.db" --json > "$W/twins.json" 2>&1

rm -rf "$W/cubins" "$W/cache" "$W/home"
cp "$STEPS" "$OUT/steps.txt"
tar -C "$W" -czf "$OUT/all.tar.gz" .
cat "$STEPS"
