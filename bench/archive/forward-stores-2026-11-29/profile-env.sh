# Sourced by call1.sh, call2.sh and prof2.sh on the GPU machine, from the repository root: the
# package staged by `bench/backward_peers_device_run.sh stage build .device/peers`, a work folder,
# FA4 4.0.0b36's two packs (../../../../shared/peers/fa4/pack.sh: .device/fa4a carried by the first
# call, .device/fa4b by the second), and each point's forward and backward tuned into the catalog.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
P=.device/pslim
W=/tmp/swr-clk
mkdir -p "$W/home"
export SWR_RUNTIME_LIBRARY=$PWD/$P/lib/libswr_runtime.so SWR_CACHE_DIR=$W/cubins \
  SWR_TUNE_PATH=$PWD/$P/bin/swr-tune HOME=$W/home SWR_DB= PYTHONUNBUFFERED=1 \
  PYTHONPATH=$PWD/$P/python:/tmp/site/nvidia_cutlass_dsl/dsl_packages:/tmp/site

keep_fa4_first_pack() { mkdir -p /tmp/fa4 && cp .device/fa4a/part.* /tmp/fa4/; }
unpack_fa4() {
  [[ -d /tmp/site/flash_attn ]] ||
    cat /tmp/fa4/part.* .device/fa4b/part.* | xz -d -T8 | (mkdir -p /tmp/site && tar -C /tmp/site -xf -)
}
# tune_point BxHxSxD-causal|noncausal: its forward and backward, --model-top 10, into $W/catalog.db.
tune_point() {
  local b h s d mask
  IFS=x read -r b h s d <<<"${1%%-*}"
  [[ $1 == *-causal ]] && mask=--causal
  for family in attention attention-backward; do
    "$P/bin/swr-tune" --family $family --gpu auto --batch "$b" --heads "$h" --seq "$s" \
      --head-dim "$d" --dtype bf16 ${mask:-} --model-top 10 --counters none --db "$W/catalog.db" \
      -j 16 > "$OUT/tune-$family-$1.log" 2>&1
    echo "tune $family $1 rc=$?"
  done
}
