#!/bin/bash
# Device run 2: correctness of every variant (incl. 2x1 clusters, 128x192), sanitizers on a
# cluster variant, ragged-shape diagnosis, full bench.
cd "$(dirname "$0")"
H=./hopper_gemm_harness
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
echo "== SASS"
for v in coop_128x256x64_s3_static_c2x1_f16 coop_128x192x64_s4_static_bf16; do
  echo "-- $v"; cuobjdump -sass cubins/$v.cubin | grep -oE "HGMMA\.[0-9A-Za-z.x]*|UTMALDG\.[0-9A-Z.]*|UTMASTG\.[0-9A-Z]*|USETMAXREG\.[A-Z.]*|STL|LDL|UCGABAR_[A-Z]*|SYNCS\.ARRIVE[A-Z0-9.]*" | sort | uniq -c
done
echo "== correctness"
hangs=0
for f in cubins/*.cubin; do v=$(basename $f .cubin); [ $v = util ] && continue
  [ $hangs -ge 3 ] && { echo "SKIP $v (3 hangs)"; continue; }
  timeout 40 $H check cubins $v > chk.txt 2>&1; rc=$?; cat chk.txt | grep -v PASS; echo "$v: $(grep -c PASS chk.txt) PASS, rc=$rc"
  [ $rc -eq 4 -o $rc -eq 124 ] && hangs=$((hangs+1))
done
echo "== sanitizers"
for v in coop_128x256x64_s3_static_c2x1_f16 pingpong_128x128x64_s4_static_c2x1_bf16; do
  for t in racecheck synccheck; do
    echo "-- $t $v"; timeout 50 compute-sanitizer --tool $t $H once cubins $v 300 264 200 2>&1 | tail -3
  done
done
echo "== ragged diagnosis (f16)"
ONLY_F16=1 SHAPES="5000,3000,7000;5120,3072,7168;5000,3072,7168;5120,3000,7168;5120,3072,7000" SWEEP_REPS=3 REPS=10 timeout 100 $H bench cubins \
  coop_128x256x64_s3_static_f16 coop_128x256x64_s3_static_c2x1_f16 coop_128x192x64_s4_static_f16 coop_256x128x64_s3_static_c2x1_f16 | grep -E "^final|^\|"
echo "== bench"
V=""
for d in f16 bf16; do for x in coop_128x256x64_s3_static coop_128x256x64_s3_static_c2x1 coop_256x128x64_s3_static coop_256x128x64_s3_static_c2x1 coop_128x192x64_s4_static coop_128x256x64_s3_dynamic pingpong_128x128x64_s4_static_c2x1 pingpong_64x256x64_s4_static; do V="$V ${x}_$d"; done; done
SWEEP_REPS=5 REPS=20 timeout 220 $H bench cubins $V
