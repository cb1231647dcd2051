set encoding utf8
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
  set terminal pngcairo size 1100,700 font 'sans,11' noenhanced
} else {
  set terminal png size 1100,700 noenhanced
}
set output "l2_misses_b8_h1_d64_f16_noncausal.png"
set grid xtics ytics mxtics mytics lc rgb '#dddddd' lw 1, lc rgb '#f0f0f0' lw 1
set key box opaque samplen 3 spacing 1.1
set border lw 1.2
set datafile missing 'NaN'
set title "L2 misses vs sequence length, cyclic vs sawtooth K/V order\nB8 H1 D64 f16 non-causal on h200 (NVIDIA H200)"
set xlabel 'sequence length S = S_q = S_kv (tokens, log scale)'
set ylabel 'L2 sector misses (32-byte sectors, log scale)'
set logscale xy
set format y '%.0s%c'
set xtics ("16K" 16384, "32K" 32768, "64K" 65536, "128K" 131072, "256K" 262144)
set xrange [11702.85714:367001.6]
set key top left Left reverse
set arrow 1 from first 89089, graph 0 to first 89089, graph 1 nohead dt 4 lw 1.5 lc rgb 'gray40'
set label 1 'model: K/V in flight exceed the usable L2' at first 89089, graph 0.04 left offset character 0.6, 0 tc rgb 'gray30' font ',10'
plot \
  "l2_misses_b8_h1_d64_f16_noncausal.dat" index 0 using 1:2 with linespoints lw 2.2 ps 1.3 pt 7 dt 1 lc rgb '#1f77b4' title "cyclic  m128n64w4s2-grid-head_major", \
  "l2_misses_b8_h1_d64_f16_noncausal.dat" index 1 using 1:2 with linespoints lw 2.2 ps 1.3 pt 5 dt 2 lc rgb '#1f77b4' title "sawtooth  m128n64w4s2-grid-head_major", \
  "l2_misses_b8_h1_d64_f16_noncausal.dat" index 2 using 1:2 with linespoints lw 2.2 ps 1.3 pt 7 dt 1 lc rgb '#d62728' title "cyclic  m128n64w4s2-static-head_major", \
  "l2_misses_b8_h1_d64_f16_noncausal.dat" index 3 using 1:2 with linespoints lw 2.2 ps 1.3 pt 5 dt 2 lc rgb '#d62728' title "sawtooth  m128n64w4s2-static-head_major", \
  "l2_misses_b8_h1_d64_f16_noncausal.dat" index 4 using 1:2 with lines lw 2 dt 3 lc rgb 'black' title 'cold misses (Q, K, V, O once)'
