#!/usr/bin/env bash
# Call 1 of the forward change's check and grid (carry .device/gchk: the built test and swr-tune in
# bin/, this script as run.sh, picks.txt, a catalog; .device/fa4a too where the carry limit allows,
# which at 74c2ac6 it did not, so a call of its own copied FA4's first pack); the wgmma forward GPU
# test (every knob, every shape) beside racecheck and synccheck on four consumer modes; then
# 7c79035's backward picks (picks.txt, the kernels unchanged) measured by fixed config into the
# staged catalog (3090edf's forward rows), for run.sh peers. Where bin/ also holds the mma.sync
# forward's GPU test (29f4e4a's call: warp_rows.cuh had changed too), it runs beside the wgmma one.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=/tmp/swr-peers
mkdir -p "$W/home" /tmp/fa4 && cp .device/fa4a/part.* /tmp/fa4/ 2>/dev/null
export SWR_CACHE_DIR=/tmp/gchk-cubins HOME=$W/home SWR_DB=
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | head -1)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/env.txt"
# Compile once, then the three runs share the cubins.
SWR_WGMMA_FIRST_SHAPE_ONLY=1 timeout 200 "$here/bin/attention_wgmma_gpu_test" --gtest_filter='*MatchesReference*' > "$OUT/first-shape.log" 2>&1
echo "first shape: $(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/first-shape.log" | tr '\n' ' ')"
timeout 300 "$here/bin/attention_wgmma_gpu_test" > "$OUT/wgmma-test.log" 2>&1 &
tests=(wgmma-test)
if [[ -x $here/bin/attention_kernel_gpu_test ]]; then
  timeout 300 "$here/bin/attention_kernel_gpu_test" > "$OUT/mma-test.log" 2>&1 &
  tests+=(mma-test)
fi
cases=(wgmma_m192n128s3_ov_sawtooth_static_head_major_d64_f16 wgmma_m192n128s2_cyclic_grid_head_major_d128_bf16
  wgmma_m128n128s2_ov_pp_sawtooth_dynamic_head_major_d128_f16_causal wgmma_m128n128s2_ov_pp_psm_cyclic_grid_head_major_d128_bf16_causal)
filter=$(printf '*MatchesReferenceThroughTheLauncher/%s:' "${cases[@]}")
for tool in racecheck synccheck; do
  SWR_WGMMA_FIRST_SHAPE_ONLY=1 timeout 300 "$SAN" --tool $tool --print-limit 20 "$here/bin/attention_wgmma_gpu_test" \
    --gtest_filter="${filter%:}" > "$OUT/$tool.log" 2>&1 &
done
wait
for log in "${tests[@]}"; do
  echo "$log: $(grep -E '^\[  (PASSED|FAILED)  \]|tests ran' "$OUT/$log.log" | tr '\n' ' ')"
  grep -E '^\[  FAILED  \]' "$OUT/$log.log" | head -5
done
for tool in racecheck synccheck; do echo "$tool: $(grep -hE 'RACECHECK SUMMARY|ERROR SUMMARY|^\[  (PASSED|FAILED)' "$OUT/$tool.log" | tr '\n' ' ')"; done
cp "$here/catalog.db" "$W/catalog.db"
while read -r point key; do
  [[ $point == \#* || -z $point ]] && continue
  dims=${point%%-*} rest=${point#*-} kv=
  IFS=x read -r b h s d <<<"$dims"
  [[ $rest == kv* ]] && kv=${rest%%-*} && kv=${kv#kv}
  mask=; [[ $point == *-causal ]] && mask=--causal
  timeout 60 "$here/bin/swr-tune" --family attention-backward --gpu auto --batch "$b" --heads "$h" \
    ${kv:+--kv-heads $kv} --seq "$s" --head-dim "$d" --dtype bf16 $mask --config "$key" \
    --counters none --db "$W/catalog.db" > "$OUT/bwd-$point.log" 2>&1
  echo "backward $point $key rc=$? $(grep -E '^  (cyclic|sawtooth) ' "$OUT/bwd-$point.log" | head -1)"
done < "$here/picks.txt"
cp "$W/catalog.db" "$OUT/catalog.db"
