// The tables the tuner ends with and `swr-tune show` prints: variants by time with their L2
// figures, the best cyclic against the best sawtooth variant, and the winner against its twin
// (same tile, persistence and swizzle, the other K/V order), the JSON form of a measurement, the
// GEMM table: the fastest variants with their ratio to cuBLAS measured in the same run, and how
// much the tile order (the block swizzle) mattered per GEMM kernel binary.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "db/records.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/gpu_profile.hpp"
#include "tuner/tuning/variant_record.hpp"

namespace swr {

// A measurement with a time: it ran, checked against the reference and was timed.
bool is_valid_measurement(const db::StoredMeasurement& measurement);

// 4.58e9 -> "4.58e9", 812 -> "812", missing -> "-"
std::string format_count(std::optional<double> value);
// The record's L2 misses, or why it has none: "- (skipped)" (the counters policy), "-
// (unavailable)",
// "- (failed)"; "-" for a variant that failed before its counters. Never 0 for a missing count.
std::string format_misses(const db::MeasurementRecord& record);
// Cells of one measurement: "1.234", "57.0%", "109.2", "-" when missing.
std::string format_milliseconds(std::optional<double> value);
std::string format_tflops(std::optional<double> value);
std::string format_hit_rate(std::optional<double> fraction);
std::string format_dram_gigabytes(const db::MeasurementRecord& record);
// The first line of an error, cut to 100 characters: what a table cell holds.
std::string first_line(const std::string& text);

// The fastest `count` valid variants (measurements as ResultsDatabase::measurements_for orders
// them), one row each: key, median ms, TFLOP/s, L2 misses, hit rate, DRAM GB.
void print_top_variants(std::ostream& out, const std::vector<db::StoredMeasurement>& measurements,
                        std::size_t count);

// Every variant, failed ones last with their status and the first line of their error.
void print_all_variants(std::ostream& out, const std::vector<db::StoredMeasurement>& measurements);

// "best cyclic vs best sawtooth" and "winner vs its twin", with the sawtooth/cyclic ratios of
// time and L2 misses; says what is missing when one side was not measured or failed.
void print_order_comparison(std::ostream& out,
                            const std::vector<db::StoredMeasurement>& measurements);

// The stored measurement with every figure (null when missing), its config and method.
nlohmann::json measurement_json(const db::StoredMeasurement& measurement);

// Header (problem, GPU, counts), the cuBLAS line (or why it is missing), then the `rows` fastest
// valid variants: key, median ms, TFLOP/s, x cuBLAS, L2 hit rate, DRAM GB; failures are counted.
void print_gemm_table(std::ostream& out, const GemmProblem& problem, const GpuProfile& gpu,
                      const std::vector<db::StoredMeasurement>& measurements,
                      const GemmBaseline& baseline, std::size_t rows);

// How much the tile order mattered for one kernel binary (a config key without its swizzle).
struct SwizzleEffect {
  std::string binary;
  std::optional<double> plain_tflops;  // swizzle stride 0
  std::string best_key;
  double best_tflops = 0;
  double worst_tflops = 0;
  int orders = 0;
  double sensitivity() const { return best_tflops > 0 ? 1 - worst_tflops / best_tflops : 0; }
};

// The binaries of the valid measurements, fastest best order first.
std::vector<SwizzleEffect> swizzle_effects(const std::vector<db::StoredMeasurement>& measured);
void print_swizzle_effects(std::ostream& out, const std::vector<SwizzleEffect>& effects);
nlohmann::json effect_json(const SwizzleEffect& effect);

}  // namespace swr
