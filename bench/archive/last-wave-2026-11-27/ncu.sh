# The backward's main kernel under ncu, one swr-tune build after another (SIDES, default "A B"), at
# ncu's base clocks (CLOCKS=none: real ones), for each "options|config" line of
# .device/q/shapes3.txt. The carried folder .device/q holds the swr-tune builds A, B, ... (A of
# 468e402, B with the last wave split). METRICS and COUNT override the metrics and launches.
#   SIDES="A B" OUT=$OUT bash bench/archive/last-wave-2026-11-27/ncu.sh    (carry .device/q)
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/card.txt
export HOME=/tmp/h SWR_DB=
mkdir -p /tmp/h
while IFS='|' read -r dims config; do
  [[ -z $dims || $dims == \#* ]] && continue
  for side in ${SIDES:-A B}; do
    export SWR_CACHE_DIR=/tmp/ncu-cache-$side
    rm -f /tmp/ncu-$side.db
    timeout 120 ncu --clock-control ${CLOCKS:-base} --metrics ${METRICS:-gpu__time_duration.sum,sm__cycles_elapsed.max} \
      --kernel-name regex:backward_v1 --launch-skip 2 --launch-count ${COUNT:-3} --csv --print-units base \
      .device/q/$side --family attention-backward --gpu auto $dims --dtype bf16 --config "$config" \
      --counters none --db /tmp/ncu-$side.db > /tmp/ncu.csv 2>/tmp/ncu.err
    python3 - "$side" "$dims" "$config" /tmp/ncu.csv <<'PY'
import csv, sys, statistics
side, dims, config, path = sys.argv[1:5]
rows = [r for r in csv.reader(l for l in open(path) if l.startswith('"'))]
head = rows[0]; vals = {}
for r in rows[1:]:
    d = dict(zip(head, r)); vals.setdefault(d["Metric Name"], []).append(float(d["Metric Value"].replace(",", "")))
print(side, dims.replace(" ", ""), config, " ".join(k.split("__")[1][:24] + "=" + "/".join(f"{x:.4g}" for x in v) for k, v in vals.items()))
PY
    grep -v '^"' /tmp/ncu.csv | grep -v "^==" | grep -i "ok\|fail\|wrong\|error" | tail -2
  done
done < .device/q/shapes3.txt
