# cmp.sh BIN_A BIN_B : loop instruction counts of the grid's picks under both binaries
cd /work/main
while IFS='|' read n o c; do
  line="$n $c"
  for b in "$@"; do
    d=/tmp/sass/cmp-$(basename $b)-$n; rm -rf $d
    r=$($b compile --family attention-backward --gpu h200 $o --dtype bf16 --config $c --cache-dir $d --json | python3 -c "import json,sys; v=json.load(sys.stdin)['variants'][0]; print(v['registers'], v['spill_bytes'], v['wgmma_serialized'] or '-')")
    /tmp/sass/sass.sh $d/*.cubin $d.sass
    line="$line | $r $(python3 /tmp/sass/loop.py $d.sass 2>/dev/null | head -1)"
  done
  echo "$line"
done <<'LIST'
d64n|--batch 2 --heads 32 --seq 16384 --head-dim 64|bwd-wgmma-m128n128w12s2-cyclic-grid-head_major
d64c|--batch 2 --heads 32 --seq 16384 --head-dim 64 --causal|bwd-wgmma-m128n128w12s3-cyclic-grid-head_major-lag-red
d128n|--batch 1 --heads 16 --seq 32768 --head-dim 128|bwd-wgmma-m80n128w12s2-sawtooth-grid-head_major-pair
d128c|--batch 1 --heads 16 --seq 32768 --head-dim 128 --causal|bwd-wgmma-m80n128w12s2-sawtooth-grid-head_major-lag
d128c4k|--batch 4 --heads 16 --seq 4096 --head-dim 128 --causal|bwd-wgmma-m64n128w12s2-cyclic-grid-head_major-lag
gqa|--batch 1 --heads 32 --kv-heads 8 --seq 32768 --head-dim 128 --causal|bwd-wgmma-m80n128w12s2-sawtooth-grid-head_major-pair-lag
d256|--batch 1 --heads 8 --seq 8192 --head-dim 256 --causal|bwd-wgmma-m64n64w12s2-sawtooth-dynamic-groups3
LIST
