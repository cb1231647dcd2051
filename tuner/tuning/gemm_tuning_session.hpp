// One GEMM tuning run: for each shape, measure cuBLAS (the baseline, in the same run) and every
// variant the database does not hold yet for this GPU (all with retune), each committed on its
// own; then the table of the fastest variants with their ratio to cuBLAS. Resumable like the
// attention session: a stopped run keeps what it measured, and the same command measures the rest.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/gpu_profile.hpp"
#include "tuner/tuning/gemm_variant_job.hpp"
#include "tuner/tuning/gemm_variant_record.hpp"
#include "tuner/tuning/interrupt_flag.hpp"

namespace swr {

struct GemmTuningShape {
  GemmProblem problem;
  std::vector<GemmConfig> configs;  // measured in this order
};

struct GemmTuningPlan {
  GpuProfile gpu;              // the device that measures (the present one, its own counts)
  std::string driver_version;  // e.g. "13.0"
  std::vector<GemmTuningShape> shapes;
  std::filesystem::path database;
  std::filesystem::path cubin_cache;
  int compile_threads = 0;                    // 0: hardware threads
  std::optional<int> limit;                   // measure at most this many new variants
  std::optional<double> time_budget_seconds;  // start no new variant after this long
  bool retune = false;
  std::size_t table_rows = 10;  // variants in the closing table, per shape
};

struct GemmTuningSummary {
  int already_measured = 0;
  int planned = 0;
  int recorded = 0;
  int failed = 0;
  int left_for_later = 0;
  bool interrupted = false;
  bool budget_reached = false;
  std::vector<GemmBaseline> baselines;  // per shape, in plan order (empty note: not measured)

  int exit_code() const { return interrupted ? 130 : 0; }
};

class GemmTuningSession {
 public:
  GemmTuningSession(GemmTuningPlan plan, GemmVariantMeasurer& measurer,
                    const InterruptFlag& interrupt);
  // Prints progress and the closing tables on stdout, notices on stderr.
  GemmTuningSummary run();

 private:
  GemmTuningPlan plan_;
  GemmVariantMeasurer& measurer_;
  const InterruptFlag& interrupt_;
};

}  // namespace swr
