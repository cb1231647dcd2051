# Call 2 (carry .device/peers, .device/fa4b, .device/diag), at once after call 1: FA4 unpacked;
# FA4's step under ncu as call 1's; then kstep.py's kernel-by-kernel step, rotating rounds.
set -u
source .device/diag/env.sh
unpack_fa4
[[ -f $W/catalog.db ]] || cp .device/diag/catalog.db $W/catalog.db
WHO=fa4 bash .device/diag/call1.sh 2>&1 | grep -v "^cp\|fa4a" 
python3 bench/archive/registers-and-host-2026-11-27/kstep.py $PWD/$P/bench $W/catalog.db ${ROUNDS:-10} \
  ${POINTS:-2x32x16384x64-noncausal 1x32x32768x64-noncausal} 2>&1 |
  grep -v "Warning\|exe_args\|_warn_once" | tee $OUT/kstep.txt
cp /tmp/kstep.json $OUT/ 2>/dev/null
nvidia-smi -q -d CLOCK,POWER > $OUT/smi.txt
