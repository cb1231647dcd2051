// What the tuner records about one kernel's L2 behaviour. Every figure is optional: a chip without
// the metric, or a process where profiling is unavailable, leaves it empty (stored as missing).
#pragma once

#include <optional>
#include <string>

namespace swr {

struct L2Counters {
  std::optional<double> l2_sectors_from_tex;        // 32-byte L2 sectors requested by L1/TEX
  std::optional<double> l2_sector_misses_from_tex;  // those that missed in L2
  std::optional<double> l2_hit_rate_percent;        // all L2 sectors, every source
  std::optional<double> dram_bytes_read;
  std::optional<double> dram_bytes_written;
  // How the DRAM figures were obtained: "dram__bytes" (the DRAM counters) or "l2_fill_sectors"
  // (GB10, no dram__ metrics: sectors filled into L2 from memory x 32 bytes); empty when none.
  std::string dram_source;

  bool empty() const {
    return !l2_sectors_from_tex && !l2_sector_misses_from_tex && !l2_hit_rate_percent &&
           !dram_bytes_read && !dram_bytes_written;
  }
};

}  // namespace swr
