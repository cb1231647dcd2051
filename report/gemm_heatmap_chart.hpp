// The gnuplot files of one GEMM swizzle heatmap (gemm_heatmap.hpp): coloured cells with their
// TFLOP/s written in, each size's best stride framed in blue, unmeasured cells left blank.
#pragma once

#include <filesystem>
#include <string>

#include "report/gemm_heatmap.hpp"
#include "report/gnuplot_script.hpp"

namespace swr::report {

ChartFiles write_gemm_heatmap_chart(const GemmHeatmap& heatmap, const std::string& gpu_label,
                                    const std::filesystem::path& directory);

}  // namespace swr::report
