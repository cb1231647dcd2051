// What the tuner measured, read back from `swr-tune show --json` dumps kept in bench/results: the
// one reader of those files for every check of the model (misses calibration, time calibration,
// the transfer to another GPU). Both families.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"

namespace swr::model {

// One variant of one shape as the tuner measured it (status ok).
template <class Problem, class Config>
struct MeasuredVariantOf {
  Problem problem;
  Config config;
  std::string gpu;      // the profile name the measurement was stored under, "h200"
  int registers = -1;   // ptxas's count for the measured build: it sets the CTAs per SM
  int ctas_per_sm = 0;  // what the tuner recorded (blocks_per_sm); 0 when not recorded
  double seconds = 0;   // median time
  int timed_runs = 0;   // 1: a variant the stop rule timed once (slower than 1.25x the best)
  std::optional<double> misses;      // lts__t_sectors_srcunit_tex_lookup_miss, when counted
  std::optional<double> dram_bytes;  // read + written, when counted
  std::string device;                // "NVIDIA H200"
  std::string measured_on;           // "2026-11-22"
  // How a --model-top tune chose it (method.selection): the model's rank, 0 for a plain tune;
  // whether it was one of the spread-out checks.
  int predicted_rank = 0;
  bool model_check = false;
};

using MeasuredAttention = MeasuredVariantOf<AttentionProblem, AttentionConfig>;
using MeasuredGemm = MeasuredVariantOf<GemmProblem, GemmConfig>;

// Every variant with status ok in <dir>/measured_*.json (files in name order) of the family.
// Throws UsageError naming the file when one cannot be read or is not `show --json` output, or
// the directory when it holds no such file.
std::vector<MeasuredAttention> read_measured_attention(const std::filesystem::path& dir);
std::vector<MeasuredGemm> read_measured_gemm(const std::filesystem::path& dir);

}  // namespace swr::model
