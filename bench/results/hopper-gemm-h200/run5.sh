#!/bin/bash
# Device run 5 (final): SASS check of every cubin, correctness of all 48 variants, sanitizers on
# the new 128x192 cluster variant, full bench (ABBA, 30 each).
cd "$(dirname "$0")"
H=./hopper_gemm_harness
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
echo "== SASS: HGMMA / UTMALDG / local-memory (STL/LDL) instruction counts per cubin"
for f in cubins/*.cubin; do v=$(basename $f .cubin); [ $v = util ] && continue
  s=$(cuobjdump -sass $f); echo "$v HGMMA=$(grep -c HGMMA <<<"$s") UTMALDG=$(grep -c UTMALDG <<<"$s") UTMASTG=$(grep -c UTMASTG <<<"$s") STG128=$(grep -c 'STG.E.128' <<<"$s") STL=$(grep -c 'STL' <<<"$s") LDL=$(grep -c 'LDL' <<<"$s") $(grep -oE 'HGMMA\.[0-9x]+' <<<"$s" | sort -u | tr '\n' ' ')"
done
echo "== correctness"
hangs=0
for f in cubins/*.cubin; do v=$(basename $f .cubin); [ $v = util ] && continue
  [ $hangs -ge 3 ] && { echo "SKIP $v (3 hangs)"; continue; }
  timeout 40 $H check cubins $v > chk.txt 2>&1; rc=$?; cat chk.txt | grep -v PASS; echo "$v: $(grep -c PASS chk.txt) PASS, rc=$rc"
  [ $rc -eq 4 -o $rc -eq 124 ] && hangs=$((hangs+1))
done
echo "== sanitizers"
for v in coop_128x192x64_s4_static_c2x1_f16 pingpong_128x128x64_s4_static_c2x1_bf16; do
for t in racecheck synccheck; do
  echo "-- $t $v"; timeout 50 compute-sanitizer --tool $t $H once cubins $v 300 264 200 2>&1 | tail -3
done; done
echo "== bench"
V=""
for d in f16 bf16; do for x in coop_128x256x64_s3_static coop_256x128x64_s3_static coop_128x192x64_s4_static coop_128x256x64_s3_static_c2x1 coop_256x128x64_s3_static_c2x1 coop_128x192x64_s4_static_c2x1 pingpong_128x128x64_s4_static_c2x1 pingpong_64x256x64_s4_static coop_128x256x64_s3_dynamic coop_128x256x64_s3_static_direct; do V="$V ${x}_$d"; done; done
SHAPES="4096,4096,4096;8192,8192,8192;16384,16384,16384;5000,3000,7000;5120,3000,7168;5000,3072,7168" SWEEP_REPS=5 REPS=30 timeout 270 $H bench cubins $V
