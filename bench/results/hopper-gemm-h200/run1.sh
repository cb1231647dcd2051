#!/bin/bash
# Device run 1: SASS check, correctness of every variant, sanitizers, short bench.
cd "$(dirname "$0")"
H=./hopper_gemm_harness
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
echo "== SASS (coop_128x256 static f16, pingpong_128x128_s4 static f16)"
for v in coop_128x256x64_s3_static_f16 pingpong_128x128x64_s4_static_f16; do
  echo "-- $v"; cuobjdump -sass cubins/$v.cubin | grep -oE "HGMMA\.[0-9A-Za-z.x]*|UTMALDG\.[0-9A-Z]*|UTMASTG\.[0-9A-Z]*|USETMAXREG\.[A-Z.]*|STL|LDL|LDS|STS\.[0-9A-Z]*|BAR\.[A-Z]*" | sort | uniq -c
done
echo "== correctness"
hangs=0
for f in cubins/*.cubin; do v=$(basename $f .cubin); [ $v = util ] && continue
  [ $hangs -ge 3 ] && { echo "SKIP $v (3 hangs)"; continue; }
  timeout 40 $H check cubins $v; rc=$?; [ $rc -ne 0 ] && echo "CHECK FAILED rc=$rc $v"
  [ $rc -eq 4 -o $rc -eq 124 ] && hangs=$((hangs+1))
done
echo "== bench (short)"
SWEEP_REPS=3 REPS=10 timeout 120 $H bench cubins coop_128x256x64_s3_static_f16 pingpong_128x128x64_s4_static_f16 coop_128x256x64_s3_static_bf16 pingpong_128x128x64_s4_static_bf16
echo "== sanitizers"
for v in coop_128x128x64_s4_dynamic_f16 pingpong_128x128x64_s4_dynamic_bf16; do
  for t in racecheck synccheck; do
    echo "-- $t $v"; timeout 50 compute-sanitizer --tool $t $H once cubins $v 300 264 200 2>&1 | tail -6
  done
done
