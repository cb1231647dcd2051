// Human-readable numbers and aligned tables for the command line.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace swr {

// 1536 -> "1.5 KiB", 50331648 -> "48 MiB"
std::string format_bytes(std::int64_t bytes);
// 3.2e12 -> "3.20 TB/s" style, with the unit appended ("B/s", "FLOP/s")
std::string format_rate(double value, const std::string& unit);
// 75.4 -> "1m15s", 4.21 -> "4.2s"
std::string format_duration(double seconds);

// Columns padded to their widest cell; numbers right-aligned when the header says so.
class TextTable {
 public:
  // A header starting with '>' is right-aligned (the '>' is not printed).
  explicit TextTable(std::vector<std::string> headers);
  void add_row(std::vector<std::string> cells);
  void print(std::ostream& out, const std::string& indent = "") const;

 private:
  std::vector<std::string> headers_;
  std::vector<bool> right_aligned_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace swr
