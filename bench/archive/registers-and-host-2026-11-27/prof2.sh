# prof2.sh swr|fa4: the backward main kernels under ncu --clock-control none (real clocks), a few
# metrics, three training steps a point. `swr` first (carry .device/peers, .device/fa4a and this
# folder: it tunes the points and keeps FA4's first pack), then `fa4` at once on the same machine
# (carry .device/fa4b and this folder).
set -u
who=$1
source "$(dirname "$0")/env.sh"
points="2x16x16384x128-noncausal 1x16x32768x128-causal"
if [[ $who == swr ]]; then
  keep_fa4_first_pack
  for point in $points; do tune_point "$point"; done
else
  unpack_fa4
fi
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,sm__inst_executed.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_red.sum,lts__t_sectors_srcunit_tex_op_read.sum
for p in $points; do
  STEPS=3 CATALOG=$W/catalog.db timeout 240 ncu --profile-from-start off --clock-control none \
    --metrics $M --kernel-name "regex:backward_v1|bwd_sm90|BackwardSm90" --csv \
    python3 "$here/../peer-profiles-2026-11-27/prof.py" "$PWD/$P/bench" "$who" "$p" \
    > "$OUT/$who-$p.csv" 2> "$OUT/$who-$p.err"
  echo "$who $p rc=$?"; grep -v '^"' "$OUT/$who-$p.csv" | tail -3; tail -2 "$OUT/$who-$p.err"
done
