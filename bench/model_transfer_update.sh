#!/bin/bash
# After issue 17's two device calls (bench/model_transfer_device_run.sh): keeps their measurements
# in bench/results/model-transfer-h200-h100/, makes the time model's calibration use the new H200
# measurements (beside the older ones in bench/results/model-time-h200/), and regenerates the
# calibration and the transfer check from them. Run from the repository root, after a build:
#
#   bench/model_transfer_update.sh H200_OUT H100_OUT     (the folders $OUT came back as)
#
# Then rebuild (the two files are embedded), run ctest -R 'calibration|transfer', and commit.
set -euo pipefail
h200=${1:?usage: bench/model_transfer_update.sh H200_OUT H100_OUT}
h100=${2:?usage: bench/model_transfer_update.sh H200_OUT H100_OUT}
dest=bench/results/model-transfer-h200-h100
mkdir -p "$dest"
for out in "$h200" "$h100"; do
  tar -xJf "$out/results.tar.xz" -C "$dest" --strip-components=1
done
# The measurements are kept xz-compressed (the model reads measured_*.json.xz as it is).
find "$dest" -name 'measured_*.json' -exec xz -9f {} +
cp "$h200/steps.txt" "$dest/h200-steps.txt"; cp "$h200/summary.txt" "$dest/h200-summary.txt"
cp "$h100/steps.txt" "$dest/h100-steps.txt"; cp "$h100/summary.txt" "$dest/h100-summary.txt"
# Which device each call ran on (nvidia-smi and `swr-tune gpus`); the other logs stay out of git.
tar -xJOf "$h200/logs.tar.xz" logs/gpu.txt > "$dest/h200-gpu.txt"
tar -xJOf "$h100/logs.tar.xz" logs/gpu.txt > "$dest/h100-gpu.txt"
# The calibration: this build's H200 measurements first, the older ones for what they add.
printf '%s\n' --gpu h200 \
  --attention "$dest/h200" --attention bench/results/model-time-h200/attention-2026-11-23 \
  --gemm "$dest/h200" --gemm bench/results/model-time-h200/gemm-2026-11-22 \
  --mma-sync-sweep "$dest/h200/sweep-m128n256k64w2x4s3/sweep.csv" \
  --wgmma-sweep "$dest/h200/sweep-wgmma/sweep.csv" > bench/results/model-time-h200/calibration_args
mapfile -t args < bench/results/model-time-h200/calibration_args
build/swr-time-model calibrate "${args[@]}" | xz -9 > bench/results/model-time-h200/time_calibration.json.xz
top=()
[[ -d $dest/h100-top10 ]] && top=(--model-top-run "$dest/h100-top10")
build/swr-time-model transfer "${args[@]}" --judge-gpu h100 --judge "$dest/h100" "${top[@]}" \
  > "$dest/transfer.json"
python3 - "$dest/transfer.json" <<'PYTHON'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["attention"]:
    o, i = s["held_out"], s["in_sample"] or {}
    print(f'{s["shape"]}: spearman {o["spearman"]} / {i.get("spearman")}, regret '
          f'{o["regret_percent"]}% / {i.get("regret_percent")}%, misses MAPE '
          f'{o["misses_mape_percent"]}% / {i.get("misses_mape_percent")}%, top-k '
          f'{o["top_k_within_2_percent"]}')
for s in d["model_top"]:
    print(f'--model-top {s["shape"]}: best {s["best"]} (rank {s["best_predicted_rank"]}), loss '
          f'{s["loss_percent"]}% (a variant measured in both tunes: {s["median_repeat_difference_percent"]}%)')
for s in d["gemm"]:
    o = s["held_out"]
    print(f'GEMM {s["shape_and_binary"]}: predicted {o["predicted_best_stride"]} measured '
          f'{o["measured_best_stride"]} loss {o["loss_percent"]}% misses MAPE {o["misses_mape_percent"]}%')
PYTHON
