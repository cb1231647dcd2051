#include "report/html_table.hpp"

#include <cmath>
#include <cstdio>

#include "report/html_report.hpp"

namespace swr::report {

HtmlTable::HtmlTable(std::vector<std::string> headers) {
  for (std::string& header : headers) {
    const bool numeric = !header.empty() && header.front() == '>';
    numeric_.push_back(numeric);
    headers_.push_back(numeric ? header.substr(1) : header);
  }
}

void HtmlTable::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string HtmlTable::render() const {
  std::string html = "<table>\n<tr>";
  for (std::size_t c = 0; c < headers_.size(); ++c) {
    html +=
        std::string(numeric_[c] ? "<th class=\"n\">" : "<th>") + html_escape(headers_[c]) + "</th>";
  }
  html += "</tr>\n";
  for (const std::vector<std::string>& row : rows_) {
    html += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      html +=
          std::string(numeric_[c] ? "<td class=\"n\">" : "<td>") + html_escape(row[c]) + "</td>";
    }
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

std::string fixed(std::optional<double> value, int decimals) {
  if (!value || !std::isfinite(*value)) return "-";
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, *value);
  return text;
}

std::string count(std::optional<double> value) {
  if (!value || !std::isfinite(*value)) return "-";
  if (std::fabs(*value) < 10000) return fixed(value, 0);
  const int exponent = static_cast<int>(std::floor(std::log10(std::fabs(*value))));
  char text[64];
  std::snprintf(text, sizeof(text), "%.2fe%d", *value / std::pow(10.0, exponent), exponent);
  return text;
}

std::string percent(std::optional<double> fraction) {
  if (!fraction) return "-";
  return fixed(*fraction * 100, 1) + "%";
}

std::string times(std::optional<double> ratio) {
  if (!ratio) return "-";
  return fixed(ratio, 2) + "x";
}

}  // namespace swr::report
