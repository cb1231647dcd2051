#!/usr/bin/env bash
# issue 13, GPU call 2: the remaining tunes (cuBLAS in the same run) + head to head, then the
# paper's --sweep on the wgmma path (coop 128x256 s3 static, f16).
set -u
D=$(cd "$(dirname "$0")" && pwd)
export HOME=$OUT/home SWR_CACHE_DIR=/tmp/g13-cubins
mkdir -p "$HOME" "$OUT/tune"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv > "$OUT/gpu.txt" 2>&1
T0=$(date +%s)
H2H=""
while read -r m n k dtype budget; do
  tag=${m}x${n}x${k}_$dtype
  keys=$(sed 's/^/--config /' "$D/keys_${m}x${n}x${k}.txt" | tr '\n' ' ')
  timeout $((budget + 25)) "$D/swr-tune" tune --family gemm --m $m --n $n --k $k --dtype $dtype --gpu h200 --time-budget $budget $keys > "$OUT/tune/$tag.log" 2>&1
  echo "tune $tag rc $? at $(( $(date +%s) - T0 )) s" >> "$OUT/gpu.txt"
  "$D/swr-tune" query --family gemm --m $m --n $n --k $k --dtype $dtype --gpu h200 > "$OUT/tune/$tag.query" 2>&1
  key=$(awk '/variant/ {print $2; exit}' "$OUT/tune/$tag.query")
  [[ -n $key ]] && H2H="$H2H$m,$n,$k,$dtype,$key;"
done < "$D/shapes2.txt"
echo "$H2H" > "$OUT/h2h-input.txt"
SWR_GEMM_HEAD_TO_HEAD="$H2H" timeout 40 "$D/gemm_performance_gpu_test" --gtest_filter='*ChosenVariants*' > "$OUT/h2h.log" 2>&1
echo "h2h rc $? at $(( $(date +%s) - T0 )) s" >> "$OUT/gpu.txt"
timeout 75 "$D/swr-tune" tune --family gemm --sweep --dtype f16 --gpu h200 --config wgmma-m128n256k64s3-cooperative-c1x1-static-swz0 --sweep-out "$OUT/sweep" > "$OUT/sweep.log" 2>&1
echo "sweep rc $? at $(( $(date +%s) - T0 )) s" >> "$OUT/gpu.txt"
