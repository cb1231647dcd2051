# profile-call1.sh (ran as .device/diag/call1.sh, from the repository root on the GPU machine,
# carrying .device/pslim: bench/backward_peers_device_run.sh's staged package without bin/;
# .device/diag: these scripts and a catalog; for swr also .device/fa4a): WHO=swr (default) or fa4,
# that candidate's training step at B2 H32 S16384 D64 under ncu --set full at real clocks, the
# details and SASS pages exported. The staged catalog had no backward rows, so a call of its own
# tuned this point's backward into $W/catalog.db first (swr-tune --family attention-backward
# ... --model-top 10 --counters none --db $W/catalog.db).
set -u
# registers-and-host's env.sh with the package staged here (ran as a copy, .device/diag/env.sh)
env=bench/archive/registers-and-host-2026-11-27/env.sh
source <(sed "s|^P=.device/peers|P=.device/pslim|" "$env")
keep_fa4_first_pack
[[ -f $W/catalog.db ]] || cp .device/diag/catalog.db $W/catalog.db
PROF=bench/archive/peer-profiles-2026-11-27/prof.py
who=${WHO:-swr}
p=2x32x16384x64-noncausal
CATALOG=$W/catalog.db timeout 300 ncu --profile-from-start off --clock-control none --set full \
  --import-source no -f -o $OUT/$who-$p python3 $PROF $PWD/$P/bench $who $p > $OUT/$who-$p.log 2>&1
echo "$who ncu rc=$?"; tail -3 $OUT/$who-$p.log
ncu --import $OUT/$who-$p.ncu-rep --page details --csv > $OUT/$who-$p-details.csv 2>&1
ncu --import $OUT/$who-$p.ncu-rep --page source --csv --print-source sass > $OUT/$who-$p-sass.csv 2>&1
xz -T8 $OUT/$who-$p-sass.csv $OUT/$who-$p-details.csv
rm -f $OUT/$who-$p.ncu-rep
ls -la $OUT
