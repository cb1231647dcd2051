set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/card.txt
if grep -q H200 $OUT/card.txt; then echo "H200: run the step instead"; exit 0; fi
P=.device/peers; W=/tmp/swr-clk; mkdir -p $W/home /tmp/fa4 && cp .device/fa4a/part.* /tmp/fa4/
export SWR_CACHE_DIR=$W/cubins HOME=$W/home SWR_DB=
cp .device/clk/catalog.db $W/catalog.db
for fam in attention attention-backward; do for m in --causal ""; do
  [[ $fam == attention && -z $m ]] && continue
  $P/bin/swr-tune --family $fam --gpu auto --batch 1 --heads 16 --seq 32768 --head-dim 128 --dtype bf16 $m --model-top 10 --counters none --db $W/catalog.db -j 16 > $OUT/tune-$fam$m.log 2>&1; echo "$fam $m rc=$?"
done; done
$P/bin/swr-tune --gpu auto --batch 1 --heads 16 --seq 32768 --head-dim 128 --dtype bf16 --model-top 10 --counters none --db $W/catalog.db -j 16 > $OUT/tune-fwd-nc.log 2>&1; echo "fwd nc rc=$?"
