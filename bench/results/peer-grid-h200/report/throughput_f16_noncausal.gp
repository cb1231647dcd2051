set encoding utf8
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
  set terminal pngcairo size 1600,1210 font 'sans,11' noenhanced
} else {
  set terminal png size 1600,1210 noenhanced
}
set output "throughput_f16_noncausal.png"
set grid xtics ytics mxtics mytics lc rgb '#dddddd' lw 1, lc rgb '#f0f0f0' lw 1
set key box opaque samplen 3 spacing 1.1
set border lw 1.2
set datafile missing 'NaN'
set multiplot layout 2,2 title "Attention forward throughput vs sequence length, f16 non-causal, on h200 (NVIDIA H200)\nTiledAttention grid: S 512-8192, B*S=16384, H=16; Sawtooth long sequences: S 16K-256K, B=8, H=1" font ',13'
set xlabel 'sequence length S (tokens, log scale)'
set ylabel 'TFLOP/s (log scale)'
set logscale xy
set xtics ("512" 512, "1024" 1024, "2048" 2048, "4096" 4096, "8192" 8192, "16K" 16384, "32K" 32768, "64K" 65536, "128K" 131072, "256K" 262144)
set xrange [365.7142857:367001.6]
set format y '%g'
set key bottom right Left reverse font ',9'
set label 1 "B·S=16384 H=16" at first 2048, graph 0.97 center tc rgb 'gray30' font ',9'
set arrow 1 from first 11585.2375, graph 0 to first 11585.2375, graph 1 nohead dt 3 lc rgb 'gray50'
set label 2 "B=8 H=1" at first 65536, graph 0.97 center tc rgb 'gray30' font ',9'
set title "head dim D=64"
plot \
  "throughput_f16_noncausal.dat" index 0 using 1:2 with linespoints lw 3.5 pt 7 ps 1.3 lc rgb '#000000' title "swr (best variant)", \
  "throughput_f16_noncausal.dat" index 1 using 1:2 with linespoints lw 2 pt 5 ps 1.0 dt 1 lc rgb '#1f77b4' title "FlashAttention-2 (SDPA FLASH)", \
  "throughput_f16_noncausal.dat" index 2 using 1:2 with linespoints lw 2 pt 5 ps 1.0 dt 1 lc rgb '#2ca02c' title "cuDNN (SDPA CUDNN)", \
  "throughput_f16_noncausal.dat" index 3 using 1:2 with linespoints lw 2 pt 5 ps 1.0 dt 1 lc rgb '#ff7f0e' title "mem-efficient (SDPA EFFICIENT)", \
  "throughput_f16_noncausal.dat" index 4 using 1:2 with linespoints lw 2 pt 5 ps 1.0 dt 1 lc rgb '#9467bd' title "PyTorch math (unfused)"
set title "head dim D=96  (swr: no kernel for D=96)"
plot \
  "throughput_f16_noncausal.dat" index 5 using 1:2 with linespoints lw 2 pt 5 ps 1.0 dt 1 lc rgb '#1f77b4' title "FlashAttention-2 (SDPA FLASH)", \
  "throughput_f16_noncausal.dat" index 6 using 1:2 with linespoints lw 2 pt 5 ps 1.0 dt 1 lc rgb '#2ca02c' title "cuDNN (SDPA CUDNN)", \
  "throughput_f16_noncausal.dat" index 7 using 1:2 with linespoints lw 2 pt 5 ps 1.0 dt 1 lc rgb '#ff7f0e' title "mem-efficient (SDPA EFFICIENT)", \
  "throughput_f16_noncausal.dat" index 8 using 1:2 with linespoints lw 2 pt 5 ps 1.0 dt 1 lc rgb '#9467bd' title "PyTorch math (unfused)"
set title "head dim D=128"
plot \
  "throughput_f16_noncausal.dat" index 9 using 1:2 with linespoints lw 3.5 pt 7 ps 1.3 lc rgb '#000000' title "swr (best variant)", \
  "throughput_f16_noncausal.dat" index 10 using 1:2 with linespoints lw 2 pt 5 ps 1.0 dt 1 lc rgb '#1f77b4' title "FlashAttention-2 (SDPA FLASH)", \
  "throughput_f16_noncausal.dat" index 11 using 1:2 with linespoints lw 2 pt 5 ps 1.0 dt 1 lc rgb '#2ca02c' title "cuDNN (SDPA CUDNN)", \
  "throughput_f16_noncausal.dat" index 12 using 1:2 with linespoints lw 2 pt 5 ps 1.0 dt 1 lc rgb '#ff7f0e' title "mem-efficient (SDPA EFFICIENT)", \
  "throughput_f16_noncausal.dat" index 13 using 1:2 with linespoints lw 2 pt 5 ps 1.0 dt 1 lc rgb '#9467bd' title "PyTorch math (unfused)"
set title "head dim D=160  (swr: no kernel for D=160)"
plot \
  "throughput_f16_noncausal.dat" index 14 using 1:2 with linespoints lw 2 pt 5 ps 1.0 dt 1 lc rgb '#1f77b4' title "FlashAttention-2 (SDPA FLASH)", \
  "throughput_f16_noncausal.dat" index 15 using 1:2 with linespoints lw 2 pt 5 ps 1.0 dt 1 lc rgb '#2ca02c' title "cuDNN (SDPA CUDNN)", \
  "throughput_f16_noncausal.dat" index 16 using 1:2 with linespoints lw 2 pt 5 ps 1.0 dt 1 lc rgb '#ff7f0e' title "mem-efficient (SDPA EFFICIENT)", \
  "throughput_f16_noncausal.dat" index 17 using 1:2 with linespoints lw 2 pt 5 ps 1.0 dt 1 lc rgb '#9467bd' title "PyTorch math (unfused)"
unset multiplot
