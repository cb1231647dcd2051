#include "tuner/tuning/result_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <string>

#include "swr/attention_config.hpp"
#include "swr/gemm_config.hpp"
#include "tuner/text_format.hpp"
#include "tuner/tuning/walk_order_twins.hpp"

namespace swr {

std::string first_line(const std::string& text) {
  const std::string line = text.substr(0, text.find('\n'));
  return line.size() > 100 ? line.substr(0, 97) + "..." : line;
}

bool is_valid_measurement(const db::StoredMeasurement& measurement) {
  return measurement.record.status == db::MeasurementStatus::ok &&
         measurement.record.median_ms.has_value();
}

namespace {

using db::StoredMeasurement;

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), pattern, value);
  return text;
}

std::optional<KvOrder> order_of(const StoredMeasurement& measurement) {
  return walk_order_of(measurement.config_key);
}

const StoredMeasurement* fastest_with_order(const std::vector<StoredMeasurement>& measurements,
                                            KvOrder order) {
  for (const StoredMeasurement& measurement : measurements) {
    if (is_valid_measurement(measurement) && order_of(measurement) == order) return &measurement;
  }
  return nullptr;
}

// "0.41x", or "-" when either side is missing.
std::string ratio(std::optional<double> numerator, std::optional<double> denominator) {
  if (!numerator || !denominator || *denominator <= 0) return "-";
  return format("%.2fx", *numerator / *denominator);
}

std::vector<std::string> figure_cells(const StoredMeasurement& measurement) {
  const db::MeasurementRecord& record = measurement.record;
  return {format_milliseconds(record.median_ms), format_tflops(record.tflops),
          format_misses(record), format_hit_rate(record.l2_hit_rate),
          format_dram_gigabytes(record)};
}

void print_pair(std::ostream& out, const std::string& first_label, const StoredMeasurement& first,
                const std::string& second_label, const StoredMeasurement* second,
                const std::string& second_missing) {
  TextTable table({"", "variant", ">ms", ">TFLOP/s", ">L2 misses", ">hit rate", ">DRAM GB"});
  auto add = [&](const std::string& label, const StoredMeasurement& measurement) {
    std::vector<std::string> row = {label, measurement.config_key};
    for (std::string& cell : figure_cells(measurement)) row.push_back(std::move(cell));
    table.add_row(std::move(row));
  };
  add(first_label, first);
  if (second != nullptr) add(second_label, *second);
  table.print(out, "  ");
  if (second == nullptr) {
    out << "  " << second_label << ": " << second_missing << "\n";
    return;
  }
  out << "  " << second_label << "/" << first_label << ": time "
      << ratio(second->record.median_ms, first.record.median_ms) << ", L2 misses "
      << ratio(second->record.l2_sector_misses, first.record.l2_sector_misses) << "\n";
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f%%", 100 * fraction);
  return text;
}

}  // namespace

std::string format_count(std::optional<double> value) {
  if (!value || !std::isfinite(*value)) return "-";
  if (std::fabs(*value) < 1e5) return format("%.0f", *value);
  const int exponent = static_cast<int>(std::floor(std::log10(std::fabs(*value))));
  double mantissa = *value / std::pow(10.0, exponent);
  return format("%.2f", mantissa) + "e" + std::to_string(exponent);
}

std::string format_misses(const db::MeasurementRecord& record) {
  if (record.l2_sector_misses) return format_count(record.l2_sector_misses);
  switch (record.counter_status.value_or(db::derived_counter_status(record))) {
    case db::CounterStatus::skipped_by_policy:
      return "- (skipped)";
    case db::CounterStatus::unavailable:
      return "- (unavailable)";
    case db::CounterStatus::failed:
      return "- (failed)";
    case db::CounterStatus::collected:
    case db::CounterStatus::not_reached:
      break;
  }
  return "-";
}

std::string format_milliseconds(std::optional<double> value) {
  if (!value) return "-";
  return format(*value < 1 ? "%.4f" : "%.3f", *value);
}

std::string format_tflops(std::optional<double> value) {
  return value ? format("%.1f", *value) : "-";
}

std::string format_hit_rate(std::optional<double> fraction) {
  return fraction ? format("%.1f%%", *fraction * 100.0) : "-";
}

std::string format_dram_gigabytes(const db::MeasurementRecord& record) {
  if (!record.dram_read_bytes && !record.dram_write_bytes) return "-";
  const double bytes = record.dram_read_bytes.value_or(0) + record.dram_write_bytes.value_or(0);
  return format(bytes >= 1e9 ? "%.1f" : "%.3f", bytes / 1e9);
}

void print_top_variants(std::ostream& out, const std::vector<StoredMeasurement>& measurements,
                        std::size_t count) {
  TextTable table({">#", "variant", ">ms", ">TFLOP/s", ">L2 misses", ">hit rate", ">DRAM GB"});
  std::size_t shown = 0;
  for (const StoredMeasurement& measurement : measurements) {
    if (shown == count) break;
    if (!is_valid_measurement(measurement)) continue;
    std::vector<std::string> row = {std::to_string(++shown), measurement.config_key};
    for (std::string& cell : figure_cells(measurement)) row.push_back(std::move(cell));
    table.add_row(std::move(row));
  }
  if (shown == 0) {
    out << "  no valid variant\n";
    return;
  }
  table.print(out, "  ");
}

void print_all_variants(std::ostream& out, const std::vector<StoredMeasurement>& measurements) {
  const bool any_failed = std::any_of(
      measurements.begin(), measurements.end(),
      [](const StoredMeasurement& measurement) { return !is_valid_measurement(measurement); });
  std::vector<std::string> headers = {">#",       "variant",    "status",    ">ms",      ">p95 ms",
                                      ">TFLOP/s", ">L2 misses", ">hit rate", ">DRAM GB", ">regs"};
  if (any_failed) headers.push_back("error");  // no empty column when everything ran
  TextTable table(headers);
  int index = 0;
  for (const StoredMeasurement& measurement : measurements) {
    const db::MeasurementRecord& record = measurement.record;
    const bool valid = is_valid_measurement(measurement);
    std::vector<std::string> row = {std::to_string(++index), measurement.config_key,
                                    std::string(db::to_string(record.status))};
    std::vector<std::string> figures = figure_cells(measurement);
    row.push_back(valid ? figures[0] : "-");
    row.push_back(valid ? format_milliseconds(record.p95_ms) : "-");
    row.push_back(valid ? figures[1] : "-");
    for (std::size_t i = 2; i < figures.size(); ++i) row.push_back(figures[i]);
    row.push_back(record.registers ? std::to_string(*record.registers) : "-");
    if (any_failed) row.push_back(first_line(record.error));
    table.add_row(std::move(row));
  }
  table.print(out, "  ");
}

void print_order_comparison(std::ostream& out, const std::vector<StoredMeasurement>& measurements) {
  const StoredMeasurement* cyclic = fastest_with_order(measurements, KvOrder::cyclic);
  const StoredMeasurement* sawtooth = fastest_with_order(measurements, KvOrder::sawtooth);
  out << "best cyclic vs best sawtooth:\n";
  if (cyclic == nullptr && sawtooth == nullptr) {
    out << "  no valid variant of either order\n";
  } else if (cyclic == nullptr) {
    print_pair(out, "sawtooth", *sawtooth, "cyclic", nullptr, "no valid variant");
  } else {
    print_pair(out, "cyclic", *cyclic, "sawtooth", sawtooth, "no valid variant");
  }

  const StoredMeasurement* winner = nullptr;
  for (const StoredMeasurement& measurement : measurements) {
    if (is_valid_measurement(measurement)) {
      winner = &measurement;
      break;
    }
  }
  if (winner == nullptr) return;
  const std::optional<KvOrder> winner_order = walk_order_of(winner->config_key);
  const std::optional<std::string> twin = walk_order_twin(winner->config_key);
  if (!winner_order || !twin) return;
  const KvOrder twin_order = *winner_order == KvOrder::cyclic ? KvOrder::sawtooth : KvOrder::cyclic;
  const std::string& twin_key = *twin;
  const StoredMeasurement* twin_measurement = nullptr;
  for (const StoredMeasurement& measurement : measurements) {
    if (measurement.config_key == twin_key) twin_measurement = &measurement;
  }
  out << "winner vs its twin (same tile, persistence and swizzle, " << to_string(twin_order)
      << " order):\n";
  std::string missing = "not measured";
  if (twin_measurement != nullptr && !is_valid_measurement(*twin_measurement)) {
    missing = std::string(db::to_string(twin_measurement->record.status)) + " (" +
              first_line(twin_measurement->record.error) + ")";
    twin_measurement = nullptr;
  }
  print_pair(out, std::string(to_string(*winner_order)), *winner,
             std::string(to_string(twin_order)), twin_measurement, twin_key + " " + missing);
}

nlohmann::json measurement_json(const StoredMeasurement& measurement) {
  const db::MeasurementRecord& record = measurement.record;
  auto number = [](const auto& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  return {
      {"config_key", measurement.config_key},
      {"config", measurement.config_json},
      {"status", std::string(db::to_string(record.status))},
      {"error", record.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(record.error)},
      {"median_ms", number(record.median_ms)},
      {"p95_ms", number(record.p95_ms)},
      {"min_ms", number(record.min_ms)},
      {"timed_runs", number(record.timed_runs)},
      {"tflops", number(record.tflops)},
      {"relative_error", number(record.relative_error)},
      {"l2_sectors_from_tex", number(record.l2_sectors_from_tex)},
      {"l2_sector_misses", number(record.l2_sector_misses)},
      {"l2_hit_rate", number(record.l2_hit_rate)},
      {"dram_read_bytes", number(record.dram_read_bytes)},
      {"dram_write_bytes", number(record.dram_write_bytes)},
      {"counter_status", std::string(db::to_string(
                             record.counter_status.value_or(db::derived_counter_status(record))))},
      {"counter_note",
       record.counter_note.empty() ? nlohmann::json(nullptr) : nlohmann::json(record.counter_note)},
      {"observed_intensity", number(record.observed_intensity)},
      {"algorithmic_intensity", number(record.algorithmic_intensity)},
      {"roofline_fraction", number(record.roofline_fraction)},
      {"registers", number(record.registers)},
      {"spill_bytes", number(record.spill_bytes)},
      {"dynamic_shared_bytes", number(record.dynamic_shared_bytes)},
      {"blocks_per_sm", number(record.blocks_per_sm)},
      {"method", record.method},
      {"source_hash", record.source_hash},
      {"toolkit_version", record.toolkit_version},
      {"driver_version", record.driver_version},
      {"measured_at", record.measured_at},
  };
}

void print_gemm_table(std::ostream& out, const GemmProblem& problem, const GpuProfile& gpu,
                      const std::vector<db::StoredMeasurement>& measurements,
                      const GemmBaseline& baseline, std::size_t rows) {
  int failed = 0;
  for (const db::StoredMeasurement& measurement : measurements)
    if (measurement.record.status != db::MeasurementStatus::ok) ++failed;
  out << "\ngemm " << problem.key() << " on " << gpu.name << " (" << gpu.description
      << "): " << measurements.size() << " variants measured, " << failed << " failed\n";
  char line[256];
  std::snprintf(line, sizeof(line), "  %-4s %-36s %10s %9s %8s %7s %8s\n", "#", "variant",
                "median ms", "TFLOP/s", "x cuBLAS", "L2 hit", "DRAM GB");
  out << line;
  if (baseline.median_ms) {
    std::snprintf(line, sizeof(line), "  %-4s %-36s %10.3f %9.1f %8s\n", "-", "cuBLAS",
                  *baseline.median_ms, gemm_tflops(problem, *baseline.median_ms), "1.000");
  } else {
    std::snprintf(line, sizeof(line), "  %-4s %-36s %s\n", "-", "cuBLAS",
                  baseline.note.empty() ? "not measured" : baseline.note.c_str());
  }
  out << line;
  std::size_t shown = 0;
  for (const db::StoredMeasurement& measurement : measurements) {
    const db::MeasurementRecord& record = measurement.record;
    if (record.status != db::MeasurementStatus::ok || !record.median_ms) continue;
    if (shown == rows) break;
    ++shown;
    std::string ratio = "-";
    if (baseline.median_ms) {
      char text[32];
      std::snprintf(text, sizeof(text), "%.3f", *baseline.median_ms / *record.median_ms);
      ratio = text;
    }
    std::snprintf(line, sizeof(line), "  %-4zu %-36s %10s %9s %8s %7s %8s\n", shown,
                  measurement.config_key.c_str(), format_milliseconds(record.median_ms).c_str(),
                  format_tflops(record.tflops).c_str(), ratio.c_str(),
                  format_hit_rate(record.l2_hit_rate).c_str(),
                  format_dram_gigabytes(record).c_str());
    out << line;
  }
  if (shown == 0) out << "  no valid variant\n";
}

std::vector<SwizzleEffect> swizzle_effects(const std::vector<db::StoredMeasurement>& measured) {
  std::map<std::string, SwizzleEffect> by_binary;
  for (const db::StoredMeasurement& measurement : measured) {
    const std::optional<GemmConfig> config = GemmConfig::from_key(measurement.config_key);
    if (!config || !is_valid_measurement(measurement) || !measurement.record.tflops) continue;
    const std::string key = config->key();
    const std::string binary = key.substr(0, key.rfind("-swz"));
    const double tflops = *measurement.record.tflops;
    SwizzleEffect& effect = by_binary[binary];
    if (effect.orders == 0 || tflops > effect.best_tflops) {
      effect.best_tflops = tflops;
      effect.best_key = key;
    }
    effect.worst_tflops = effect.orders == 0 ? tflops : std::min(effect.worst_tflops, tflops);
    if (config->swizzle_stride == 0) effect.plain_tflops = tflops;
    effect.binary = binary;
    ++effect.orders;
  }
  std::vector<SwizzleEffect> effects;
  for (auto& [binary, effect] : by_binary) effects.push_back(std::move(effect));
  std::sort(effects.begin(), effects.end(), [](const SwizzleEffect& a, const SwizzleEffect& b) {
    return a.best_tflops > b.best_tflops;
  });
  return effects;
}

void print_swizzle_effects(std::ostream& out, const std::vector<SwizzleEffect>& effects) {
  if (effects.empty()) return;
  out << "block swizzle per tile binary (TFLOP/s; sensitivity = (best - worst) / best):\n";
  TextTable table({"binary", ">plain", "best order", ">best", ">worst", ">orders", ">sensitivity"});
  for (const SwizzleEffect& effect : effects) {
    table.add_row({effect.binary, format_tflops(effect.plain_tflops),
                   effect.best_key.substr(effect.binary.size() + 1),
                   format_tflops(effect.best_tflops), format_tflops(effect.worst_tflops),
                   std::to_string(effect.orders), percent(effect.sensitivity())});
  }
  table.print(out, "  ");
}

nlohmann::json effect_json(const SwizzleEffect& effect) {
  return {{"binary", effect.binary},
          {"plain_tflops", effect.plain_tflops ? nlohmann::json(*effect.plain_tflops) : nullptr},
          {"best_config", effect.best_key},
          {"best_tflops", effect.best_tflops},
          {"worst_tflops", effect.worst_tflops},
          {"orders", effect.orders},
          {"sensitivity", effect.sensitivity()}};
}

}  // namespace swr
