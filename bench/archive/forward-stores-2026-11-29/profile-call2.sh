# profile-call2.sh (ran as .device/diag/call2.sh, carrying .device/pslim, .device/fa4b and
# .device/diag, on the machine of profile-call1.sh): FA4 unpacked; FA4's step under ncu as
# profile-call1.sh's; then kstep.py's kernel-by-kernel step in rotating rounds. (Its kstep part
# failed on a catalog that call 1 had replaced and ran again in a call of its own, after the
# backward's tune: ROUNDS=12, the one point.)
set -u
# registers-and-host's env.sh with the package staged here (ran as a copy, .device/diag/env.sh)
env=bench/archive/registers-and-host-2026-11-27/env.sh
source <(sed "s|^P=.device/peers|P=.device/pslim|" "$env")
unpack_fa4
[[ -f $W/catalog.db ]] || cp .device/diag/catalog.db $W/catalog.db
WHO=fa4 bash .device/diag/call1.sh  # profile-call1.sh 2>&1 | grep -v "^cp\|fa4a" 
python3 bench/archive/registers-and-host-2026-11-27/kstep.py $PWD/$P/bench $W/catalog.db ${ROUNDS:-10} \
  ${POINTS:-2x32x16384x64-noncausal 1x32x32768x64-noncausal} 2>&1 |
  grep -v "Warning\|exe_args\|_warn_once" | tee $OUT/kstep.txt
cp /tmp/kstep.json $OUT/ 2>/dev/null
nvidia-smi -q -d CLOCK,POWER > $OUT/smi.txt
