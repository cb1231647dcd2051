#!/bin/bash
# Device run 4: remote arrive without .release.cluster; correctness of all variants, cluster
# grid test, full bench.
cd "$(dirname "$0")"
H=./hopper_gemm_harness
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
echo "== correctness"
hangs=0
for f in cubins/*.cubin; do v=$(basename $f .cubin); [ $v = util ] && continue
  [ $hangs -ge 3 ] && { echo "SKIP $v (3 hangs)"; continue; }
  timeout 40 $H check cubins $v > chk.txt 2>&1; rc=$?; cat chk.txt | grep -v PASS; echo "$v: $(grep -c PASS chk.txt) PASS, rc=$rc"
  [ $rc -eq 4 -o $rc -eq 124 ] && hangs=$((hangs+1))
done
echo "== sanitizers"
for t in racecheck synccheck; do
  echo "-- $t coop_128x256x64_s3_static_c2x1_bf16"; timeout 50 compute-sanitizer --tool $t $H once cubins coop_128x256x64_s3_static_c2x1_bf16 300 264 200 2>&1 | tail -3
done
echo "== cluster grid 128 vs occupancy (f16)"
for g in 128 132; do echo "-- CLUSTER_GRID=$g"
CLUSTER_GRID=$g ONLY_F16=1 SHAPES="4096,4096,4096;8192,8192,8192;5000,3000,7000" SWEEP_REPS=3 REPS=10 timeout 60 $H bench cubins \
  coop_128x256x64_s3_static_c2x1_f16 coop_256x128x64_s3_static_c2x1_f16 pingpong_128x128x64_s4_static_c2x1_f16 | grep -E "^final"
done
echo "== bench"
V=""
for d in f16 bf16; do for x in coop_128x256x64_s3_static coop_128x256x64_s3_static_direct coop_256x128x64_s3_static coop_128x192x64_s4_static coop_128x256x64_s3_static_c2x1 coop_256x128x64_s3_static_c2x1 pingpong_128x128x64_s4_static_c2x1 pingpong_64x256x64_s4_static coop_128x256x64_s3_dynamic; do V="$V ${x}_$d"; done; done
SHAPES="4096,4096,4096;8192,8192,8192;16384,16384,16384;5000,3000,7000;5120,3000,7168;5000,3072,7168" SWEEP_REPS=5 REPS=30 timeout 240 $H bench cubins $V
