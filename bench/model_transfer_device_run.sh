#!/bin/bash
# Issue 17's measurements, one device call per GPU (bench/results/model-transfer-h200-h100/):
#
#   GPU=h200 bash bench/model_transfer_device_run.sh   # ~5 min: what the time model calibrates on
#   GPU=h100 bash bench/model_transfer_device_run.sh   # ~5 min: what judges it, and --model-top
#
# Binary: $SWR_TUNE (default: swr-tune beside this script, else build/swr-tune). Results: $OUT.
# Attention shapes (fp16, H=1): the validation shapes B=1, S=131072, D 64/128, causal and not (the
# K/V of a head, 32/64 MiB, is past the usable L2 of both GPUs: 30 MiB on the H200, 25 MiB on the
# H100); on the H200 also the calibration shapes B=4, S=32768 (K/V per head 8/16 MiB: fits),
# head_major variants only (the swizzles do not change a variant's compute). Each kernel set is
# compiled first (swr-tune compile) so that the tune times below count measuring only.
#   h200: every shape tuned with its wgmma variants first (the stop rule then times the slower
#         mma_sync variants once: the calibration needs their step, not 20 runs of it).
#   h100: every validation shape tuned twice, each into its own database: the plain tune (the
#         space's own order, what `swr-tune` does) and `--model-top 10` (the model's 10 fastest
#         predicted and 3 spread-out checks, ranked by the time model embedded in this binary,
#         calibrated on H200 measurements only).
# Both: the GEMM block-swizzle sweep (9 sizes x 11 strides) of two binaries, the wgmma
# coop 128x256 s3 static and the mma_sync m128n256k64w2x4s3-grid.
# Every step has a time limit, logs its exit code and the script goes on past a failing step; the
# last lines are a summary table. Files back: summary.txt, steps.txt, results.tar.xz (the
# `swr-tune show --json` dumps and sweep tables), logs.tar.xz.
set -u
D=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GPU=${GPU:?set GPU=h200 or GPU=h100}
OUT=${OUT:-$D/out-$GPU}
TUNE=${SWR_TUNE:-$D/swr-tune}
[[ -x $TUNE ]] || TUNE=$D/../build/swr-tune
SUMMARY=${SUMMARY:-$D/model_transfer_summary.py}
mkdir -p "$OUT/logs" "$OUT/results/$GPU"
export SWR_CACHE_DIR=/tmp/swr-cubins-m17 HOME=/tmp/home-m17
mkdir -p "$HOME" "$SWR_CACHE_DIR"
# The sm_90a cubins of every variant run here, compiled on the build machine (the cache key names
# the source, the NVRTC version and the arch: a different NVRTC compiles them again).
[[ -f $D/cubins-sm90.tar.xz ]] && tar -xJf "$D/cubins-sm90.tar.xz" --strip-components=1 -C "$SWR_CACHE_DIR"
START=$SECONDS
BUDGET=${BUDGET:-520}  # no step runs past this many seconds from the start
DB=/tmp/m17-$GPU.db
DB_TOP=/tmp/m17-$GPU-top10.db
rm -f "$DB" "$DB_TOP" "$OUT/steps.txt"

step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  local start=$SECONDS left=$((BUDGET - SECONDS + START))
  if ((left < 8)); then echo "$name skipped (budget) 0s" | tee -a "$OUT/steps.txt"; return; fi
  ((limit > left)) && limit=$left
  timeout "$limit" "$@" > "$OUT/logs/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $((SECONDS - start))s" | tee -a "$OUT/steps.txt"
}

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader
  "$TUNE" gpus; } > "$OUT/logs/gpu.txt" 2>&1
# `swr-tune gpus` names the present device on the line after "present device (--gpu auto):".
if ! grep -A2 "^present device" "$OUT/logs/gpu.txt" | grep -qE "^ +$GPU "; then
  echo "the present device is not the $GPU this run is for (logs/gpu.txt)" | tee -a "$OUT/steps.txt"
fi

# shape: B S D causal(0/1)
VALIDATION=("1 131072 64 0" "1 131072 64 1" "1 131072 128 0" "1 131072 128 1")
FIT=("4 32768 64 0" "4 32768 64 1" "4 32768 128 0" "4 32768 128 1")
shape_args() { local b=$1 s=$2 d=$3 c=$4; echo "--batch $b --heads 1 --seq $s --head-dim $d$([[ $c == 1 ]] && echo " --causal")"; }
shape_name() { local b=$1 s=$2 d=$3 c=$4; echo "b${b}_s${s}_d${d}_$([[ $c == 1 ]] && echo causal || echo noncausal)"; }
# The head_major keys of a shape's space, wgmma first, as --config arguments.
wgmma_first_keys() {
  "$TUNE" space --gpu "$GPU" $(shape_args "$@") --json | python3 -c '
import json, sys
keys = [c["key"] for c in json.load(sys.stdin)["configs"] if "head_major" in c["key"]]
print(" ".join("--config " + k for k in sorted(keys, key=lambda k: not k.startswith("wgmma"))))'
}

# 1. Compile every kernel set once (D x mask; the sequence length is a launch argument).
for shape in "${FIT[@]}"; do
  set -- $shape
  step "compile_d$3_c$4" 60 "$TUNE" compile --gpu "$GPU" $(shape_args "$@") $(wgmma_first_keys "$@") -j 16
done

# 2. Tunes.
tune_shape() {  # tune_shape PREFIX DB LIMIT EXTRA... -- B S D C
  local prefix=$1 db=$2 limit=$3; shift 3
  local extra=()
  while [[ $1 != -- ]]; do extra+=("$1"); shift; done
  shift
  step "${prefix}_$(shape_name "$@")" "$limit" "$TUNE" tune --gpu "$GPU" $(shape_args "$@") --db "$db" -j 16 "${extra[@]}"
}
if [[ $GPU == h200 ]]; then
  for shape in "${VALIDATION[@]}"; do
    tune_shape tune "$DB" 70 --time-budget 60 $(wgmma_first_keys $shape) -- $shape
  done
  for shape in "${FIT[@]}"; do
    tune_shape tune "$DB" 55 --time-budget 45 $(wgmma_first_keys $shape) -- $shape
  done
else
  for shape in "${VALIDATION[@]}"; do
    tune_shape tune "$DB" 85 --time-budget 75 -- $shape
  done
  for shape in "${VALIDATION[@]}"; do
    tune_shape top10 "$DB_TOP" 40 --model-top 10 -- $shape
  done
fi

# 3. GEMM sweeps of two binaries.
for binary in wgmma-m128n256k64s3-cooperative-c1x1-static-swz0 m128n256k64w2x4s3-grid-swz0; do
  step "sweep_${binary%%-*}" 60 "$TUNE" tune --family gemm --gpu "$GPU" --sweep --config "$binary" --db "$DB" -j 16 --sweep-out "$OUT/results/$GPU/sweep-${binary%%-*}"
done

# 4. The measurements as `show --json`, for the calibration and the check (bench/results).
dump() {  # dump DB DIR B S D C
  local db=$1 dir=$2; shift 2
  mkdir -p "$dir"
  "$TUNE" show --gpu "$GPU" --db "$db" $(shape_args "$@") --json > "$dir/measured_$(shape_name "$@").json" 2>> "$OUT/logs/dump.log"
}
for shape in "${VALIDATION[@]}"; do dump "$DB" "$OUT/results/$GPU" $shape; done
if [[ $GPU == h200 ]]; then
  for shape in "${FIT[@]}"; do dump "$DB" "$OUT/results/$GPU" $shape; done
else
  for shape in "${VALIDATION[@]}"; do dump "$DB_TOP" "$OUT/results/$GPU-top10" $shape; done
fi
for size in 512 1024 2048 3072 4096 6144 8192 12288 16384; do
  "$TUNE" show --family gemm --gpu "$GPU" --db "$DB" --size $size --json > "$OUT/results/$GPU/measured_gemm_$size.json" 2>> "$OUT/logs/dump.log"
done

tar -cJf "$OUT/results.tar.xz" -C "$OUT" results && rm -rf "$OUT/results"
python3 "$SUMMARY" "$OUT" "$GPU" > "$OUT/summary.txt" 2>> "$OUT/logs/summary.log"
tar -cJf "$OUT/logs.tar.xz" -C "$OUT" logs && rm -rf "$OUT/logs"
echo "total $((SECONDS - START))s" | tee -a "$OUT/steps.txt"
cat "$OUT/summary.txt"
