#!/usr/bin/env bash
# Measured L2 behaviour of cyclic vs sawtooth twins over the sequence length, on the present GPU.
# For each shape it tunes the twins (same tile, stages, persistence, swizzle) into one database,
# then dumps every measured variant as JSON; swr-l2-calibration (model/calibration_check.hpp)
# compares them with the model, bench/l2_calibration.py lays that out as tables.
#   bench/l2_sweep.sh OUT_DIR [SEQ...]     (default SEQ: 16384 32768 65536 131072 262144)
#   SWEEP_VARIANTS="m64n64w4s3-grid-head_major" SWEEP_CAUSAL=no bench/l2_sweep.sh OUT_DIR
set -euo pipefail
out=${1:?usage: bench/l2_sweep.sh OUT_DIR [SEQ...]}
shift
seqs=${*:-16384 32768 65536 131072 262144}
swr=${SWR_TUNE:-build/swr-tune}
mkdir -p "$out"
db="$out/sweep.db"
# SWEEP_VARIANTS: variants without their order (each is swept cyclic and sawtooth);
# SWEEP_CAUSAL=no: the non-causal shapes only.
variants=${SWEEP_VARIANTS:-m128n64w4s2-grid-head_major m128n64w4s2-static-head_major}
configs=()
for variant in $variants; do
  tile=${variant%%-*}
  rest=${variant#*-}
  for order in cyclic sawtooth; do
    configs+=(--config "$tile-$order-$rest")
  done
done
causal_modes=("" --causal)
[[ ${SWEEP_CAUSAL:-yes} == no ]] && causal_modes=("")
for head_dim in 64 128; do
  for causal in "${causal_modes[@]}"; do
    for seq in $seqs; do
      shape=(--gpu auto --batch 8 --heads 1 --seq "$seq" --head-dim "$head_dim" $causal)
      "$swr" tune "${shape[@]}" "${configs[@]}" --db "$db" >"$out/tune.log" 2>&1 ||
        { cat "$out/tune.log"; exit 1; }
      "$swr" show "${shape[@]}" --db "$db" --json >"$out/measured_d${head_dim}_s${seq}${causal:+_causal}.json"
      echo "measured d=$head_dim seq=$seq ${causal:-non-causal}"
    done
  done
done
