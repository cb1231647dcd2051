set encoding utf8
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
  set terminal pngcairo size 1100,720 font 'sans,11' noenhanced
} else {
  set terminal png size 1100,720 noenhanced
}
set output "roofline.png"
set grid xtics ytics mxtics mytics lc rgb '#dddddd' lw 1, lc rgb '#f0f0f0' lw 1
set key box opaque samplen 3 spacing 1.1
set border lw 1.2
set datafile missing 'NaN'
set title "Roofline on h200 (NVIDIA H200): each shape's best variant at its observed arithmetic intensity"
set xlabel 'arithmetic intensity (FLOP per DRAM byte, log scale)'
set ylabel 'achieved TFLOP/s (log scale)'
set logscale xy
set format x '%.0s%c'
set xrange [6.868055556:393216]
set yrange [3.296666667:1780.2]
set key bottom right font ',10'
set samples 600
roof(x) = x * 4.8 < 989 ? x * 4.8 : 989
set arrow 1 from first 206.0416667, graph 0 to first 206.0416667, first 989 nohead dt 3 lc rgb 'gray50'
set label 1 "ridge 206 FLOP/B" at first 206.0416667, graph 0.04 left offset character 0.5, 0 tc rgb 'gray30'
plot roof(x) with lines lw 3 lc rgb '#444444' title "roofline: HBM 4.8 TB/s, tensor peak 989 TFLOP/s", \
  "roofline.dat" index 10 using 1:2:($3-$1):(0) with vectors nohead dt 3 lw 1.2 lc rgb 'gray60' notitle, \
  '' index 0 using 1:2 with points pt 7 ps 1.6 lc rgb '#1f77b4' title "attention D64 (observed)", \
  '' index 1 using 1:2 with points pt 6 ps 1.6 lw 1.5 lc rgb '#1f77b4' notitle, \
  '' index 2 using 1:2 with points pt 7 ps 1.6 lc rgb '#d62728' title "attention D64 causal (observed)", \
  '' index 3 using 1:2 with points pt 6 ps 1.6 lw 1.5 lc rgb '#d62728' notitle, \
  '' index 4 using 1:2 with points pt 7 ps 1.6 lc rgb '#2ca02c' title "attention D128 (observed)", \
  '' index 5 using 1:2 with points pt 6 ps 1.6 lw 1.5 lc rgb '#2ca02c' notitle, \
  '' index 6 using 1:2 with points pt 7 ps 1.6 lc rgb '#9467bd' title "attention D128 causal (observed)", \
  '' index 7 using 1:2 with points pt 6 ps 1.6 lw 1.5 lc rgb '#9467bd' notitle, \
  '' index 8 using 1:2 with points pt 7 ps 1.6 lc rgb '#ff7f0e' title "GEMM f16 (observed)", \
  '' index 9 using 1:2 with points pt 6 ps 1.6 lw 1.5 lc rgb '#ff7f0e' notitle, \
  NaN with points pt 6 ps 1.6 lw 1.5 lc rgb 'gray30' title 'open: algorithmic intensity'
