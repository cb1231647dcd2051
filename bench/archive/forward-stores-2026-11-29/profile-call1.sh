# Call 1 (carry .device/peers, .device/fa4a, .device/diag): FA4's first pack kept; swr's step at
# the weak point under ncu --set full, real clocks, with SASS.
set -u
source .device/diag/env.sh
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
