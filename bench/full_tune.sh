#!/usr/bin/env bash
# The tuner's end-to-end check on a GPU: full tunes of the shapes named in the tuner's issue, timed,
# then the same command again (everything measured: only the lookups), then `show --json` of each.
#   bench/full_tune.sh OUT_DIR [--gpu h200]
# Shapes: B=8 H=1 D=128 S=131072 causal and not (--both); B=8 H=1 D=64 S=131072 and D=128
# S=65536 non-causal (K/V per head 32 MiB: where it first exceeds what the H200's L2 keeps).
set -euo pipefail
out=${1:?usage: bench/full_tune.sh OUT_DIR [--gpu NAME]}
shift
gpu=h200
if [[ ${1:-} == --gpu ]]; then gpu=${2:?--gpu needs a name}; fi
swr=${SWR_TUNE:-build/swr-tune}
mkdir -p "$out"
db="$out/full_tune.db"
export SWR_CACHE_DIR=${SWR_CACHE_DIR:-$out/cubins}

timed() {  # timed LABEL COMMAND...: runs it, logs it, appends "LABEL seconds" to timings.txt
  local label=$1
  shift
  local start end
  start=$(date +%s.%N)
  "$@" >"$out/$label.log" 2>&1 || { tail -30 "$out/$label.log"; echo "$label failed" >&2; }
  end=$(date +%s.%N)
  awk -v label="$label" -v s="$start" -v e="$end" 'BEGIN { printf "%s %.1f\n", label, e - s }' |
    tee -a "$out/timings.txt"
}

both=(--gpu "$gpu" --batch 8 --heads 1 --seq 131072 --head-dim 128 --both --db "$db")
timed tune_d128_s131072_both "$swr" "${both[@]}"
timed retune_d128_s131072_both "$swr" "${both[@]}"
timed tune_d64_s131072 "$swr" --gpu "$gpu" --batch 8 --heads 1 --seq 131072 --head-dim 64 --db "$db"
timed tune_d128_s65536 "$swr" --gpu "$gpu" --batch 8 --heads 1 --seq 65536 --head-dim 128 --db "$db"

for shape in "131072 128" "131072 128 --causal" "131072 64" "65536 128"; do
  set -- $shape
  "$swr" show --gpu "$gpu" --batch 8 --heads 1 --seq "$1" --head-dim "$2" ${3:-} --db "$db" \
    >"$out/show_d$2_s$1${3:+_causal}.txt"
  "$swr" show --gpu "$gpu" --batch 8 --heads 1 --seq "$1" --head-dim "$2" ${3:-} --db "$db" --json \
    >"$out/measured_d$2_s$1${3:+_causal}.json"
done
echo "results in $out"
