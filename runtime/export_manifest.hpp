// manifest.json of an export directory (`swr-tune export`): one entry per tuned shape, with what a
// program needs to load and launch its cubin without the database or NVRTC (entry name, block
// size, grid rule, dynamic shared memory, arch), what was measured, and the cubin's SHA-256.
// Attention kernels are listed in "kernels", GEMM kernels in "gemm_kernels", attention backward
// modules in "backward_kernels" (each with its three kernels in launch order and its workspace).
// Reading is strict: a missing field, a wrong type, an unknown arch or family, or fields that
// contradict each other (a key that is not its shape) fail with the field's path.
//
// Versions: 1 lists attention kernels only; 2 adds "gemm_kernels"; 3 changes the attention
// kernels' launch ABI (kManifestLaunchArgsVersion); 4 adds the log-sum-exp argument to it
// (kManifestLseVersion); 5 adds "backward_kernels" (kManifestBackwardVersion). An export is
// written with the lowest version that holds it (5 with backward modules, 4 with attention
// kernels, 2 with GEMM kernels alone); every version up to kManifestSchemaVersion reads, and a
// build that reads only older ones refuses a newer export.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "db/records.hpp"
#include "swr/attention_backward_config.hpp"
#include "swr/attention_backward_problem.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"

namespace swr {

inline constexpr const char* kManifestFileName = "manifest.json";
inline constexpr const char* kManifestFormat = "swr-kernel-export";
// Raised when a field changes meaning or a required one is added; readers refuse newer versions.
inline constexpr int kManifestSchemaVersion = 5;
// The first version with "gemm_kernels".
inline constexpr int kManifestGemmVersion = 2;
// The first version whose attention kernels take the launch-argument block (entry
// kAttentionEntryWithoutLse, "arguments" kAttentionArgumentsWithoutLse) and whose problems may
// carry kv_heads and causal_align. Older attention entries are read, for their measurements, and
// never launched.
inline constexpr int kManifestLaunchArgsVersion = 3;
// The first version whose attention kernels also take where to write the log-sum-exp (entry
// kAttentionEntryName, "arguments" kAttentionArguments). Version 3's still launch, for inference.
inline constexpr int kManifestLseVersion = 4;
// The first version with "backward_kernels".
inline constexpr int kManifestBackwardVersion = 5;
// How an attention entry is called, for a program that launches its cubin without swr.
#define SWR_ATTENTION_ARGUMENTS                                                                   \
  "q, k, v (pointers; wgmma: tensor maps, see tensor_maps), o, then one AttentionArgs struct by " \
  "value (templates/attention/attention_args.cuh: batch, heads, kv_heads, seq_q, seq_kv, "        \
  "causal_shift, scale_log2 = log2(e) / sqrt(head_dim), tile_counter, wave_size = blocks_per_sm " \
  "* sm_count, then element strides {batch, head, seq} of q, k, v and o)"
inline constexpr const char* kAttentionArguments = SWR_ATTENTION_ARGUMENTS
    ", then lse (float*: [batch, heads, seq_q] fp32, each row's natural "
    "log-sum-exp, for the backward; null: none is written)";
inline constexpr const char* kAttentionArgumentsWithoutLse = SWR_ATTENTION_ARGUMENTS;
#undef SWR_ATTENTION_ARGUMENTS
// What every kernel of a backward module takes last (its tensors come first: "arguments" of each
// kernel in the entry's "launch_sequence").
inline constexpr const char* kBackwardArguments =
    "one BackwardArgs struct by value, the same for the three kernels of a launch "
    "(templates/attention/backward/backward_args.cuh): batch, heads, kv_heads, seq_q, seq_kv, "
    "causal_shift, seq_q_padded = q_tiles * block_m, scale = 1 / sqrt(head_dim), scale_log2 = "
    "scale * log2(e), wave_size = blocks_per_sm * sm_count of the main kernel, q_tiles = "
    "ceil(seq_q / block_m), kv_tiles = ceil(seq_kv / block_n), group_heads = heads / kv_heads, "
    "split_whole and split_parts (backward_last_wave of templates/attention/backward/"
    "backward_schedule.cuh with the main kernel's units, wave_size / cluster_ctas and "
    "group_heads * q_tiles steps where its grid says split_last_wave, else units and 1), "
    "split_words (16-byte words from split_arrivals to the end of the sums of the split units' "
    "CTAs; 0 where nothing is split), tile_counter, the "
    "workspace's parts (see workspace; semaphores null without deterministic dQ, split_arrivals "
    "and split_sums null where nothing is split), then element strides {batch, head, seq} of q, "
    "k, v, o, d_o, dq, dk and dv";

// What every exported kernel has, whichever its family: the GPU, how to launch the cubin, the
// cubin itself and the measurement that made it the best.
struct ExportedKernelBase {
  db::GpuRecord gpu;  // the GPU it was tuned on
  std::string entry;  // extern "C" kernel name
  int block_threads = 0;
  int dynamic_shared_bytes = 0;
  std::string arch;        // the cubin's target, e.g. "sm_90a"
  std::string cubin_file;  // a file name in the export directory
  std::uint64_t cubin_bytes = 0;
  std::string cubin_sha256;  // lowercase hex
  std::optional<int> registers;
  std::string compiled_source_hash;  // cubin cache key of the exported build
  std::string toolkit_version;       // NVRTC that compiled the exported cubin
  // The measurement that made it the best: status ok, with its own source hash (the measured
  // build), toolkit and driver versions and time.
  db::MeasurementRecord measured;
};

struct ExportedKernel : ExportedKernelBase {
  AttentionProblem problem;
  AttentionConfig config;
};

struct ExportedGemmKernel : ExportedKernelBase {
  GemmProblem problem;
  GemmConfig config;
};

// An attention backward module: the base's entry, block size and shared memory are its main
// kernel's; the manifest lists all three kernels from its problem and config
// (runtime/attention_backward/backward_kernels.hpp).
struct ExportedBackwardKernel : ExportedKernelBase {
  AttentionBackwardProblem problem;
  AttentionBackwardConfig config;
};

struct ExportManifest {
  int schema_version = kManifestSchemaVersion;  // as read; writing takes the lowest that fits
  std::string swr_version;
  std::string created_at;  // UTC
  std::string gpu;         // the --gpu the export was made for
  std::vector<ExportedKernel> kernels;
  std::vector<ExportedGemmKernel> gemm_kernels;
  // A tuned shape's fastest variant, and beside it its fastest deterministic one where the fastest
  // is not (for a caller that asks for deterministic dQ).
  std::vector<ExportedBackwardKernel> backward_kernels;
};

// The lowest schema version that holds `manifest` (what manifest_to_json writes).
int required_schema_version(const ExportManifest& manifest);

// How the launcher sizes the grid for a persistence mode, as written in the manifest: "grid" (one
// CTA per Q tile), "static" or "dynamic" (at most one wave of resident CTAs).
std::string grid_rule_name(Persistence persistence);
nlohmann::json grid_rule_json(Persistence persistence);
// The same for a GEMM: "grid" (one CTA per output tile) or "static" (at most one wave), and the
// swizzle arguments of the launch.
std::string grid_rule_name(GemmPersistence persistence);
nlohmann::json grid_rule_json(const GemmConfig& config);

nlohmann::json manifest_to_json(const ExportManifest& manifest);
// `document` names the manifest in error messages. Throws UsageError naming the field.
ExportManifest manifest_from_json(const nlohmann::json& json, const std::string& document);
// Reads and parses `file` (UsageError for an unreadable file or bad JSON).
ExportManifest read_manifest_file(const std::filesystem::path& file);

}  // namespace swr
