// The gnuplot files of the roofline (roofline_points.hpp): log-log, the bandwidth diagonal and
// the compute roof with the ridge marked, each best variant as a filled dot at its observed
// intensity and an open circle at its algorithmic one, joined by a dotted line.
#pragma once

#include <filesystem>
#include <string>

#include "report/gnuplot_script.hpp"
#include "report/roofline_points.hpp"

namespace swr::report {

ChartFiles write_roofline_chart(const Roofline& roofline, const std::string& gpu_label,
                                const std::filesystem::path& directory);

}  // namespace swr::report
