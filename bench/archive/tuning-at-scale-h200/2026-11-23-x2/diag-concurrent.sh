#!/usr/bin/env bash
# Why --devices all is no faster than one GPU: one tuner alone, two independent tuners at once on
# two GPUs, then --devices all; top/nvidia-smi/strace samples during each.
set -u
B=$PWD/.device/tuning-at-scale/bin/swr-tune; chmod +x "$B"
D=/tmp/diag18; rm -rf $D; mkdir -p $D; L=$OUT/diag; mkdir -p $L
export SWR_CACHE_DIR=$D/cubins XDG_CACHE_HOME=$D/xdg
SHAPE="--gpu h200 --seq 1024 --batch 4 --heads 8 --head-dim 64"
command -v strace perf gdb > $L/tools.txt 2>&1
nproc >> $L/tools.txt; cat /sys/fs/cgroup/cpu.max >> $L/tools.txt 2>&1
$B compile $SHAPE > $L/compile.log 2>&1
sample() {  # sample NAME: at 8 s into a run
  sleep 8
  top -b -n 1 -H -w 200 | head -45 > $L/top-$1.txt
  nvidia-smi --query-gpu=index,utilization.gpu,clocks.sm --format=csv > $L/smi-$1.txt
  ps -eo pid,ppid,pcpu,etime,args | grep -E "swr-tune" | grep -v grep > $L/ps-$1.txt
  w=$(pgrep -f "__measure-worker" | head -1)
  if command -v strace > /dev/null && [[ -n $w ]]; then timeout 4 strace -c -f -p $w > $L/strace-$1.txt 2>&1; fi
  if command -v perf > /dev/null && [[ -n $w ]]; then timeout 5 perf top -p $w --stdio -E 25 > $L/perf-$1.txt 2>&1; fi
}
t0=$(date +%s.%N)
sample one & SWR_DEVICE=0 $B tune $SHAPE --db $D/one.db > $L/one.log 2>&1; wait
t1=$(date +%s.%N)
sample two & (SWR_DEVICE=0 $B tune $SHAPE --db $D/a.db > $L/two-a.log 2>&1) & (SWR_DEVICE=1 $B tune $SHAPE --db $D/b.db > $L/two-b.log 2>&1) & wait
t2=$(date +%s.%N)
sample all & $B tune $SHAPE --devices all --db $D/all.db > $L/all.log 2>&1; wait
t3=$(date +%s.%N)
echo "one $(echo "$t1 - $t0" | bc) two-at-once $(echo "$t2 - $t1" | bc) all $(echo "$t3 - $t2" | bc)" | tee $L/times.txt
grep -h "measured" $L/one.log $L/two-a.log $L/two-b.log $L/all.log | tee -a $L/times.txt
