// "Which kernel is best for this shape on this GPU": the tuned results of a results database
// (opened read-only) or of an export directory (manifest.json and its cubins, no database and no
// NVRTC needed), for every family: attention, its backward and GEMM. A shape that was tuned is
// answered exactly; any other by the nearest tuned shape that shares what is compiled into a kernel
// (attention: head dim, dtype and causal mode; GEMM: dtype) by swr/shape_distance.hpp; when there
// is none the answer says so (MatchKind::none), it does not throw. The first answer for a (GPU,
// shape) comes from the file, later ones from memory. Thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "swr/attention_backward_config.hpp"
#include "swr/attention_backward_problem.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/export.h"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"

namespace swr {

class Attention;
class Gemm;
class AttentionBackward;

enum class MatchKind {
  exact,    // this very shape was tuned on this GPU
  nearest,  // another shape, the nearest by shape_distance
  none,     // nothing tuned that could run this shape on this GPU
};

SWR_API std::string_view to_string(MatchKind kind);

// What the tuner measured for a variant: device-event times with the L2 flushed before each run,
// and the L2 counters where profiling was allowed (empty otherwise).
struct MeasuredFigures {
  double median_ms = 0;
  std::optional<double> p95_ms;
  std::optional<double> min_ms;
  std::optional<int> timed_runs;
  std::optional<double> tflops;
  std::optional<double> relative_error;  // against the fp32 reference
  std::optional<double> l2_sector_misses;
  std::optional<double> l2_hit_rate;  // fraction in [0, 1]
  std::optional<double> dram_read_bytes;
  std::optional<double> dram_write_bytes;
  std::optional<int> registers;
  std::optional<int> blocks_per_sm;
  std::string measured_at;  // UTC, "YYYY-MM-DDTHH:MM:SS.mmmZ"
  std::string driver_version;
};

// What the best variant of one tuned (GPU, shape) is, whichever its family: the GPU it was tuned
// on, its build and what was measured.
struct TunedKernelBase {
  std::string gpu;   // GPU name as tuned, e.g. "h200"
  std::string arch;  // what its cubin is compiled for, e.g. "sm_90a"
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  std::string device_name;
  std::string config_key;
  int dynamic_shared_bytes = 0;
  MeasuredFigures measured;
  std::string source_hash;      // the measured build (cubin cache key of its source and options)
  std::string toolkit_version;  // NVRTC that compiled the measured build
};

// The best attention variant of one tuned (GPU, shape).
struct TunedKernel : TunedKernelBase {
  AttentionProblem problem;  // the tuned shape (the one asked for only when exact)
  AttentionConfig config;
};

// The best GEMM variant of one tuned (GPU, shape).
struct TunedGemmKernel : TunedKernelBase {
  GemmProblem problem;  // the tuned shape (the one asked for only when exact)
  GemmConfig config;
};

// The best attention backward variant of one tuned (GPU, shape).
struct TunedAttentionBackwardKernel : TunedKernelBase {
  AttentionBackwardProblem problem;  // the tuned shape (the one asked for only when exact)
  AttentionBackwardConfig config;
};

// What a backward lookup must return: any variant (the fastest), or one whose dQ is the same bit
// for bit on every run (DqAccumulation::deterministic), as torch.use_deterministic_algorithms
// asks.
enum class DqRequirement { any, deterministic };

// How a lookup was answered (TunedChoice for attention, TunedGemmChoice for GEMM).
template <class Kernel>
struct TunedChoiceOf {
  MatchKind match = MatchKind::none;
  std::shared_ptr<const Kernel> kernel;  // null when match is none
  double distance = 0;                   // 0 when exact
  std::string why_none;                  // what was missing, when match is none

  explicit operator bool() const { return kernel != nullptr; }
};

using TunedChoice = TunedChoiceOf<TunedKernel>;
using TunedGemmChoice = TunedChoiceOf<TunedGemmKernel>;
using TunedBackwardChoice = TunedChoiceOf<TunedAttentionBackwardKernel>;

class SWR_API TunedCatalog {
 public:
  // Throws UsageError, naming the file, for a path that is not a results database of this
  // build's schema.
  static TunedCatalog open_database(const std::filesystem::path& path);
  // A directory written by `swr-tune export` (or its manifest.json). Every field of the manifest
  // and the SHA-256 of every cubin are checked first; any fault throws UsageError naming the
  // field or the file, and nothing is loaded.
  static TunedCatalog open_export(const std::filesystem::path& directory_or_manifest);
  // open_export for a directory or a file named manifest.json, open_database for anything else.
  static TunedCatalog open(const std::filesystem::path& path);

  // The best kernel for `problem` on the GPU named `gpu` ("h200"; as `swr-tune gpus` names it).
  // Throws UsageError only for a problem that is not valid (AttentionProblem::validate).
  TunedChoice best(std::string_view gpu, const AttentionProblem& problem) const;
  // The same for a GEMM (GemmProblem::validate). Every GEMM variant runs every valid shape of its
  // dtype, so the nearest tuned shape of the same dtype stands in for an untuned one.
  TunedGemmChoice best(std::string_view gpu, const GemmProblem& problem) const;

  // The best backward variant for `problem` (the fastest, or the fastest deterministic one), exact
  // else nearest as for the forward, from a results database or an export (which holds each tuned
  // shape's fastest variant and, where that is not deterministic, its fastest deterministic one).
  TunedBackwardChoice best(std::string_view gpu, const AttentionBackwardProblem& problem,
                           DqRequirement dq = DqRequirement::any) const;

  // GPU names with tuned results (of any family).
  std::vector<std::string> gpu_names() const;
  // "results database /path" or "export /dir".
  std::string description() const;
  bool is_export() const;

  // Drops the answers kept in memory (e.g. after the database was tuned further).
  void forget_answers() const;

 private:
  friend class Attention;  // take an export's cubins from the source behind the catalog
  friend class Gemm;
  friend class AttentionBackward;
  struct State;  // the source and the answers; copies of a catalog share it

  explicit TunedCatalog(std::shared_ptr<State> state) : state_(std::move(state)) {}
  const std::shared_ptr<State>& state() const { return state_; }

  std::shared_ptr<State> state_;
};

}  // namespace swr
