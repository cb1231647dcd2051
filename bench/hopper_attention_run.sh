#!/bin/bash
# Device-side driver for one lease: correctness, sanitizers, SASS check, timing, peers.
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee $OUT/env.txt
H=./hopper_attention_harness
if ! $H 2>/dev/null | grep -q usage; then
  echo "prebuilt harness does not run here; building" | tee -a $OUT/env.txt
  g++ -O2 -std=c++17 hopper_attention_harness.cpp -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lnvrtc -ldl -o harness_dev && H=./harness_dev
fi
SKIP_TIMING=1 timeout ${CORRECT_S:-150} $H run cubins 2>&1 | tee $OUT/correct.txt
echo "=== SASS" | tee $OUT/sass.txt
for c in cubins/d128_m128_n128_s2_f16_full_ov_pp.cubin cubins/d64_m192_n128_s2_f16_full_ov.cubin cubins/d128_m128_n176_s2_f16_full_ov_pp.cubin; do
  echo "$c HGMMA $(cuobjdump -sass $c | grep -c HGMMA) UTMALDG $(cuobjdump -sass $c | grep -c UTMALDG) USETMAXREG $(cuobjdump -sass $c | grep -c USETMAXREG)" | tee -a $OUT/sass.txt
  cuobjdump -res-usage $c 2>&1 | grep -i reg | tee -a $OUT/sass.txt
done
LONG=1 SKIP_CORRECT=1 timeout ${TIME_S:-200} $H run cubins timings.csv 2>&1 | grep -v CORRECT | tee $OUT/timing.txt
cp timings.csv $OUT/ 2>/dev/null
timeout ${PEER_S:-120} python3 hopper_attention_peers.py timings.csv $OUT/table.md 2>&1 | tee $OUT/peers.txt
for tool in racecheck synccheck; do
  for f in d128_m128_n128_s2_f16_full_ov_pp d64_m128_n128_s2_f16_causal d64_m192_n192_s2_f16_full; do
    echo "=== $tool $f" >> $OUT/sanitizer.txt
    FILTER=$f SMALL=1 SKIP_TIMING=1 timeout 40 compute-sanitizer --tool $tool $H run cubins 2>&1 | tail -15 >> $OUT/sanitizer.txt
  done
done
