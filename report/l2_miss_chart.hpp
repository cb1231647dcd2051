// The gnuplot files of one L2-misses panel (l2_miss_series.hpp): log-log, one colour per twin
// pair, solid cyclic and dashed sawtooth, the cold-miss line in black and the model's onset of
// non-compulsory misses as a vertical marker.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "report/gnuplot_script.hpp"
#include "report/l2_miss_series.hpp"

namespace swr::report {

ChartFiles write_l2_miss_chart(const L2MissPanel& panel, const std::string& gpu_label,
                               const std::filesystem::path& directory);

// Log-scale tics at the given values, labelled 512, 16K, 256K: `set xtics (...)`, and an x range
// a little wider than the values.
std::string sequence_tics(const std::vector<double>& values);

}  // namespace swr::report
