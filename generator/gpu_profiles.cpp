// The built-in GPU targets. Every number names where it comes from; "guide" is the CUDA C++
// Programming Guide, table "Technical Specifications per Compute Capability".
#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "swr/gpu_profile.hpp"

namespace swr {

// bench/results/l2-sweep-h200/calibration.json, embedded by generator/CMakeLists.txt.
std::string_view embedded_h200_l2_calibration();

namespace {

GpuProfile::ModelCalibration::Figures calibration_figures(const nlohmann::json& json) {
  GpuProfile::ModelCalibration::Figures figures;
  figures.points = json.at("points").get<int>();
  figures.misses_mape_percent = json.at("misses_mape_percent").get<double>();
  figures.pooled_spearman = json.at("pooled_spearman").get<double>();
  figures.min_shape_spearman = json.at("min_shape_spearman").get<double>();
  figures.median_shape_spearman = json.at("median_shape_spearman").get<double>();
  figures.pairs = json.at("pairs").get<int>();
  figures.pairs_ordered = json.at("pairs_ordered").get<int>();
  return figures;
}

// The calibration.json that model/calibration_check.cpp wrote; none while it is not generated.
std::optional<GpuProfile::ModelCalibration> embedded_model_calibration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const nlohmann::json json = nlohmann::json::parse(text);
  GpuProfile::ModelCalibration calibration;
  calibration.in_sample = calibration_figures(json.at("in_sample").at("figures"));
  calibration.held_out = calibration_figures(json.at("held_out").at("figures"));
  calibration.fit_set = json.at("held_out").at("fit_set").get<std::string>();
  calibration.checked_on = json.at("checked_on").get<std::string>();
  calibration.evidence = json.at("evidence").get<std::string>();
  return calibration;
}

constexpr std::int64_t kMiB = 1024 * 1024;
constexpr int kKiB = 1024;
// L2 sectors are 32 bytes on every NVIDIA GPU since Volta (CUDA Best Practices Guide, "Coalesced
// Access to Global Memory"; Nsight Compute's lts__t_sectors counts them).
constexpr int kL2SectorBytes = 32;

GpuProfile gb10_profile() {
  GpuProfile gpu;
  gpu.name = "gb10";
  gpu.description = "NVIDIA GB10 (DGX Spark)";
  gpu.arch = "sm_121";  // compute capability 12.1 (NVIDIA DGX Spark documentation, guide)
  gpu.compute_major = 12;
  gpu.compute_minor = 1;
  // 6,144 CUDA cores at 128 per Blackwell SM (DGX Spark spec sheet; Hot Chips 2025 GB10 talk).
  gpu.sm_count = 48;
  gpu.l2_sector_bytes = kL2SectorBytes;
  gpu.l2_bytes = 24 * kMiB;  // 24 MB GPU L2 (Hot Chips 2025 GB10 talk)
  // No public sign of a split L2 on GB10: one partition, every sector counted once. Not measured.
  gpu.l2_partitions = 1;
  gpu.l2_shared_miss_factor = 1.0;
  // Guide, 12.x column: 99 KB per block with opt-in, 100 KB of shared memory per SM.
  gpu.shared_memory_per_block_optin = 99 * kKiB;
  gpu.shared_memory_per_sm = 100 * kKiB;
  gpu.registers_per_sm = 64 * 1024;  // guide, 12.x: 64K 32-bit registers per SM
  gpu.max_threads_per_sm = 1536;     // guide, 12.x: 48 resident warps per SM
  gpu.max_blocks_per_sm = 32;        // guide, 12.x
  // 128 GB LPDDR5X, 256-bit, 273 GB/s (DGX Spark spec sheet and the NVIDIA blog cited below; Hot
  // Chips 2025 quoted ~301 GB/s raw). A measured 218 GB/s is reported (huggingface/kernels pull
  // 283).
  gpu.dram_bytes_per_second = 273e9;
  // Dense fp16 tensor rate with fp32 accumulation. NVIDIA quotes "up to 1 PFLOP FP4 (with
  // sparsity)" (DGX Spark product page and hardware guide, docs.nvidia.com/dgx/dgx-spark/): dense
  // is half that, and each step up in precision (FP4 -> FP8 -> FP16) halves it again: 125
  // TFLOP/s. Uncertain, by about 20%: NVIDIA's blog "Scaling Autonomous AI Agents and Workloads
  // with NVIDIA DGX Spark" (developer.nvidia.com) gives 48 SMs at 2.14 GHz, and a consumer
  // Blackwell SM does 1024 dense fp16 FLOP per clock (RTX 5090: 419 TFLOP/s over 170 SMs at
  // 2.41 GHz: "From Ampere to Blackwell: L2 Cache Scaling and Block Scheduling in High-Performance
  // GEMM", Table 1; the 2.41 GHz boost clock is our assumption), which gives 105 TFLOP/s at
  // that clock. GeForce Blackwell halves the rate with fp32 accumulation (RTX 5060 Ti measured
  // 47 vs 88 TFLOP/s, github.com/QuantumDrizzy/BLACKWALL); GB10 does not seem to: a BF16 matmul
  // measured 92.3 TFLOP/s on it (github.com/huggingface/kernels pull 283), and CuTile attention
  // 69 TFLOP/s (Zhu, Pan, Ding: "Sawtooth Wavefront Reordering", §4.3.1), both above half of
  // either figure.
  // Not measured here. The time model scales per-SM step times by this rate.
  gpu.peak_tensor_flops = 125e12;
  return gpu;
}

GpuProfile h100_profile() {
  GpuProfile gpu;
  gpu.name = "h100";
  gpu.description = "NVIDIA H100 (SXM5 80GB)";
  // sm_90a: the arch-specific target, needed for wgmma/setmaxnreg (guide; H100 datasheet: CC 9.0).
  gpu.arch = "sm_90a";
  gpu.compute_major = 9;
  gpu.compute_minor = 0;
  gpu.l2_sector_bytes = kL2SectorBytes;
  gpu.sm_count = 132;  // NVIDIA H100 Tensor Core GPU architecture whitepaper: 132 SMs on SXM5
  // 50 MB = 52,428,800 B as cudaDeviceProp::l2CacheSize reports it (NVIDIA H100 architecture
  // whitepaper: 50 MB L2 on H100 SXM5).
  gpu.l2_bytes = 50 * kMiB;
  // Guide, 9.0 column: 227 KB per block with opt-in, 228 KB per SM.
  gpu.shared_memory_per_block_optin = 227 * kKiB;
  gpu.shared_memory_per_sm = 228 * kKiB;
  gpu.registers_per_sm = 64 * 1024;     // guide, 9.0
  gpu.max_threads_per_sm = 2048;        // guide, 9.0: 64 resident warps
  gpu.max_blocks_per_sm = 32;           // guide, 9.0
  gpu.dram_bytes_per_second = 3.35e12;  // H100 SXM5 datasheet: 3.35 TB/s HBM3
  // H100 SXM5 datasheet: 989.4 TFLOP/s dense fp16/bf16 tensor (1,979 with sparsity).
  gpu.peak_tensor_flops = 989e12;
  // GH100's L2 is two partitions (NVIDIA H100 architecture whitepaper): data every SM streams
  // behaves as if each kept a copy, and each sector both miss together counts 1.43 misses
  // (measured on the H200, the same GH100 L2: bench/results/h200-l2-streaming; not measured on an
  // H100).
  gpu.l2_partitions = 2;
  gpu.l2_shared_miss_factor = 1.43;
  // Fitted by hand to every point of the attention sweep on the H200 (bench/results/l2-sweep-h200):
  // first touches count once, a fill from the other partition half a miss per sector. Its
  // calibration.json sets these figures beside a refit on half the sweep, judged on the rest.
  gpu.l2_first_touch_miss_factor = 1.0;
  gpu.l2_peer_fill_miss_weight = 0.5;
  return gpu;
}

GpuProfile h200_profile() {
  GpuProfile gpu = h100_profile();  // same GH100 chip and SM; more and faster memory
  gpu.name = "h200";
  gpu.description = "NVIDIA H200 (SXM 141GB)";
  // The device reports l2CacheSize = 62,914,560 B (60 MiB; `swr-tune gpus` on the lent H200:
  // bench/results/runtime-h200/gpus.log). Only about half of it holds data that every SM shares
  // (bench/results/h200-l2-streaming); the L2 model accounts for that, not this number.
  gpu.l2_bytes = 60 * kMiB;
  gpu.dram_bytes_per_second = 4.8e12;  // H200 datasheet: 4.8 TB/s HBM3e
  // H200 datasheet: 989 TFLOP/s dense fp16 (same SMs as H100). cuBLAS reached 766 TFLOP/s fp16 at
  // 4096^3 on the lent H200 (bench/results/gemm-sweep-h200/gemm-performance.txt.xz).
  gpu.peak_tensor_flops = 989e12;
  // The tuner's counters against the model over S 16K-256K, D 64/128, causal and not, cyclic and
  // sawtooth, grid and static: computed by swr-l2-calibration and embedded at build time.
  gpu.model_calibration = embedded_model_calibration(embedded_h200_l2_calibration());
  return gpu;
}

std::string lowercase(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

}  // namespace

std::string GpuProfile::compute_capability() const {
  return std::to_string(compute_major) + "." + std::to_string(compute_minor);
}

const std::vector<GpuProfile>& builtin_gpu_profiles() {
  static const std::vector<GpuProfile> profiles = {gb10_profile(), h100_profile(), h200_profile()};
  return profiles;
}

std::optional<GpuProfile> find_gpu_profile(std::string_view name) {
  const std::string wanted = lowercase(name);
  for (const GpuProfile& gpu : builtin_gpu_profiles()) {
    if (gpu.name == wanted) return gpu;
  }
  return std::nullopt;
}

std::string gpu_profile_names() {
  std::string names;
  for (const GpuProfile& gpu : builtin_gpu_profiles()) names += gpu.name + ", ";
  return names + "auto";
}

}  // namespace swr
