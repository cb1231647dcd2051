// A table of index.html, and the way its numbers are written. Cells are plain text (escaped when
// rendered); columns whose header starts with '>' are right-aligned numbers.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace swr::report {

class HtmlTable {
 public:
  explicit HtmlTable(std::vector<std::string> headers);
  void add_row(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  std::string render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<bool> numeric_;
  std::vector<std::vector<std::string>> rows_;
};

// "-" when missing; otherwise `decimals` digits after the point.
std::string fixed(std::optional<double> value, int decimals);
// 2114260 -> "2.11e6", 812 -> "812", missing -> "-"
std::string count(std::optional<double> value);
// 0.975 -> "97.5%"
std::string percent(std::optional<double> fraction);
// 1.04 -> "1.04x"
std::string times(std::optional<double> ratio);

}  // namespace swr::report
