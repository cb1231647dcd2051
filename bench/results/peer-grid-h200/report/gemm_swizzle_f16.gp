set encoding utf8
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
  set terminal pngcairo size 1230,740 font 'sans,11' noenhanced
} else {
  set terminal png size 1230,740 noenhanced
}
set output "gemm_swizzle_f16.png"
set datafile missing 'NaN'
set title "GEMM TFLOP/s by matrix size and block-swizzle stride, f16, on h200 (NVIDIA H200)\n(best variant per cell; blue frame: best stride of the size)"
set xlabel 'swizzle stride (elements of the swizzled axis; 0 = no swizzle)'
set ylabel 'matrix size M×N×K'
set cblabel 'TFLOP/s'
set xtics ("0" 0, "256" 1, "512" 2, "1024" 3, "1536" 4, "1792" 5, "2048" 6, "3072" 7, "4096" 8, "6144" 9, "8192" 10) scale 0
set ytics ("512³" 0, "1024³" 1, "2048³" 2, "3072³" 3, "4096³" 4, "6144³" 5, "8192³" 6, "12288³" 7, "16384³" 8) scale 0
set xrange [-0.5:11-0.5]
set yrange [-0.5:9-0.5]
set palette defined (0 '#fde725', 0.5 '#5ec962', 1 '#21918c')
unset key
set tics out nomirror
plot "gemm_swizzle_f16.dat" index 0 using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder lc palette, \
  '' index 0 using 1:2:(sprintf('%.0f', $3)) with labels font ',10' tc rgb 'black', \
  '' index 1 using 1:2:(0.46):(0.46) with boxxyerror fs empty border lc rgb '#1f3fbf' lw 3
