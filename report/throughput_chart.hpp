// The gnuplot files of one throughput panel (throughput_series.hpp): a multiplot with one plot
// per head dim, S on a log axis, TFLOP/s (log when the candidates span more than a decade), swr
// in a heavy black line and each peer in its own colour.
#pragma once

#include <filesystem>
#include <string>

#include "report/gnuplot_script.hpp"
#include "report/throughput_series.hpp"

namespace swr::report {

// `subtitle` goes under the title (e.g. which batch and heads each regime uses).
ChartFiles write_throughput_chart(const ThroughputPanel& panel, const std::string& gpu_label,
                                  const std::string& subtitle,
                                  const std::filesystem::path& directory);

}  // namespace swr::report
