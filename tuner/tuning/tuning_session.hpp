// One tuning run: for each shape, measure every variant of the space that the database does not
// hold yet for this GPU (all of them with retune), committing each on its own, while the rest
// compile in parallel. A run stopped by Ctrl-C, --limit or --time-budget keeps what it measured;
// the same command later measures only what is missing. It ends with the result tables.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gpu_profile.hpp"
#include "tuner/tuning/interrupt_flag.hpp"
#include "tuner/tuning/variant_measurer.hpp"

namespace swr {

struct TuningShape {
  AttentionProblem problem;
  std::vector<AttentionConfig> configs;  // measured in this order (as far as compiling allows)
};

struct TuningPlan {
  GpuProfile gpu;              // the device that measures (the present one, its own counts)
  std::string driver_version;  // e.g. "13.0"
  std::vector<TuningShape> shapes;
  std::filesystem::path database;
  std::filesystem::path cubin_cache;
  int compile_threads = 0;                    // 0: hardware threads
  std::optional<int> limit;                   // measure at most this many new variants
  std::optional<double> time_budget_seconds;  // start no new variant after this long
  bool retune = false;                        // measure again what is already measured
  std::size_t table_rows = 10;                // variants in the closing table, per shape
};

struct TuningSummary {
  int already_measured = 0;  // skipped: the database has them
  int planned = 0;           // variants this run set out to measure
  int recorded = 0;          // committed, whatever their status
  int failed = 0;            // of those, not ok
  int left_for_later = 0;    // missing variants beyond --limit
  bool interrupted = false;
  bool budget_reached = false;

  // 130 after Ctrl-C (what a shell reports for SIGINT), else 0: failed variants are results.
  int exit_code() const { return interrupted ? 130 : 0; }
};

class TuningSession {
 public:
  // `measurer` is only asked when something needs measuring (a complete shape costs no device).
  TuningSession(TuningPlan plan, VariantMeasurer& measurer, const InterruptFlag& interrupt);
  // Prints progress and the closing tables on stdout, notices on stderr. Throws UsageError for a
  // database it cannot use, std::runtime_error when measuring is impossible (what is committed
  // stays committed).
  TuningSummary run();

 private:
  TuningPlan plan_;
  VariantMeasurer& measurer_;
  const InterruptFlag& interrupt_;
};

}  // namespace swr
