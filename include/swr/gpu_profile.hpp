// A GPU target: what NVRTC compiles for and what the resource and L2 models need to know.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include "swr/export.h"

namespace swr {

struct SWR_API GpuProfile {
  std::string name;         // "gb10", "h100", "h200", or the present device's for "auto"
  std::string description;  // marketing name, e.g. "NVIDIA H200 (SXM)"
  std::string arch;         // NVRTC target, e.g. "sm_90a"
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  // Shared memory one CTA may opt into (net of the reserve), and what one SM has in all; each
  // resident CTA also takes `reserved_shared_memory_per_block` of the SM's share.
  int shared_memory_per_block_optin = 0;
  int shared_memory_per_sm = 0;
  int reserved_shared_memory_per_block = 1024;  // CUDA guide: 1 KB per CTA since compute 8.0
  int registers_per_sm = 65536;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  double dram_bytes_per_second = 0;  // for the roofline
  double peak_tensor_flops = 0;      // dense fp16/bf16 with fp32 accumulate
  // L2 geometry for the L2 model (model/). Sectors are what the L2 tags and the counters count.
  int l2_sector_bytes = 32;
  // Partitions that each keep their own copy of data that all SMs read: shared data fits only in
  // l2_bytes / l2_partitions (2 on sm_90: bench/results/h200-l2-streaming/README.md).
  int l2_partitions = 1;
  // Misses the counters report per missing sector when every partition misses it at once
  // (requests in flight count too): 1.43 measured on the H200 (bench/results/h200-l2-streaming),
  // 1 on a single-partition L2.
  double l2_shared_miss_factor = 1.0;
  // The same when the partitions miss a tile together the first time it is ever read. Attention
  // on the H200 counts such sectors once (bench/results/l2-sweep-h200: cold misses = compulsory
  // within 1% where everything fits), while a bare streaming kernel counts them 1.43 times.
  double l2_first_touch_miss_factor = 1.0;
  // Misses counted per sector when a partition fetches a tile that another partition holds (it
  // comes over the crossbar, not from DRAM): fitted to the H200 sweep, 0.5.
  double l2_peer_fill_miss_weight = 0.0;
  // How far the L2 model has been checked against hardware counters on this GPU; none when never.
  // The figures are computed from measurements in the repository (model/calibration_check.hpp,
  // bench/results/l2-sweep-h200/calibration.json), never typed in.
  struct ModelCalibration {
    struct Figures {
      int points = 0;
      double misses_mape_percent = 0;    // mean absolute percentage error of L2 sector misses
      double pooled_spearman = 0;        // rank correlation over all points of the set
      double min_shape_spearman = 0;     // within one shape (one problem, its variants): worst
      double median_shape_spearman = 0;  // ... and median over the shapes
      int pairs = 0;          // within-shape variant pairs whose measured misses differ by >= 5%
      int pairs_ordered = 0;  // of those, the pairs the model orders as measured
    };
    Figures in_sample;       // the profile's constants, on the points they were fitted on
    Figures held_out;        // constants refitted on `fit_set` alone, on the other points
    std::string fit_set;     // "head_dim 64"
    std::string checked_on;  // device and date
    std::string evidence;    // the file the figures come from
  };
  std::optional<ModelCalibration> model_calibration;

  // "9.0", "12.1"
  std::string compute_capability() const;
};

// The built-in targets, in display order.
SWR_API const std::vector<GpuProfile>& builtin_gpu_profiles();

// Looks up a built-in profile by name ("gb10", "h100", "h200"). Names are case-insensitive.
SWR_API std::optional<GpuProfile> find_gpu_profile(std::string_view name);

// "gb10, h100, h200, auto" for error messages.
SWR_API std::string gpu_profile_names();

}  // namespace swr
