#include "tuner/text_format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace swr {

namespace {

// "%.1f" with a trailing ".0" dropped: 48.0 -> "48", 1.5 -> "1.5".
std::string compact_number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", value);
  std::string result = text;
  if (result.size() > 2 && result.compare(result.size() - 2, 2, ".0") == 0)
    result.resize(result.size() - 2);
  return result;
}

}  // namespace

std::string format_bytes(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (std::fabs(value) >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  return compact_number(value) + " " + units[unit];
}

std::string format_rate(double value, const std::string& unit) {
  if (value <= 0) return "-";
  const char* prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  int prefix = 0;
  while (value >= 1000 && prefix < 6) {
    value /= 1000;
    ++prefix;
  }
  return compact_number(value) + " " + prefixes[prefix] + unit;
}

std::string format_duration(double seconds) {
  if (seconds < 0) seconds = 0;
  char text[32];
  if (seconds < 60) {
    std::snprintf(text, sizeof(text), "%.1fs", seconds);
  } else if (seconds < 3600) {
    const int whole = static_cast<int>(std::lround(seconds));
    std::snprintf(text, sizeof(text), "%dm%02ds", whole / 60, whole % 60);
  } else {
    const int minutes = static_cast<int>(std::lround(seconds / 60));
    std::snprintf(text, sizeof(text), "%dh%02dm", minutes / 60, minutes % 60);
  }
  return text;
}

TextTable::TextTable(std::vector<std::string> headers) {
  for (std::string& header : headers) {
    const bool right = !header.empty() && header.front() == '>';
    right_aligned_.push_back(right);
    headers_.push_back(right ? header.substr(1) : header);
  }
}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void TextTable::print(std::ostream& out, const std::string& indent) const {
  std::vector<std::size_t> widths;
  for (const std::string& header : headers_) widths.push_back(header.size());
  for (const auto& row : rows_) {
    for (std::size_t column = 0; column < row.size(); ++column) {
      widths[column] = std::max(widths[column], row[column].size());
    }
  }
  auto print_row = [&](const std::vector<std::string>& cells) {
    std::string line = indent;
    for (std::size_t column = 0; column < cells.size(); ++column) {
      const std::string padding(widths[column] - cells[column].size(), ' ');
      const bool last = column + 1 == cells.size();
      if (right_aligned_[column]) {
        line += padding + cells[column];
      } else {
        line += cells[column] + (last ? "" : padding);
      }
      if (!last) line += "  ";
    }
    out << line << '\n';
  };
  print_row(headers_);
  for (const auto& row : rows_) print_row(row);
}

}  // namespace swr
