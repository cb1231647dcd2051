// manifest.json of an export directory (`swr-tune export`): one entry per tuned shape, with what a
// program needs to load and launch its cubin without the database or NVRTC (entry name, block
// size, grid rule, dynamic shared memory, arch), what was measured, and the cubin's SHA-256.
// Reading is strict: a missing field, a wrong type, an unknown arch or family, or fields that
// contradict each other (a key that is not its shape) fail with the field's path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "db/gpu_record.hpp"
#include "db/measurement_record.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"

namespace swr {

inline constexpr const char* kManifestFileName = "manifest.json";
inline constexpr const char* kManifestFormat = "swr-kernel-export";
// Raised when a field changes meaning or a required one is added; readers refuse newer versions.
inline constexpr int kManifestSchemaVersion = 1;

struct ExportedKernel {
  db::GpuRecord gpu;  // the GPU it was tuned on
  AttentionProblem problem;
  AttentionConfig config;
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

struct ExportManifest {
  int schema_version = kManifestSchemaVersion;
  std::string swr_version;
  std::string created_at;  // UTC
  std::string gpu;         // the --gpu the export was made for
  std::vector<ExportedKernel> kernels;
};

// How the launcher sizes the grid for a persistence mode, as written in the manifest: "grid" (one
// CTA per Q tile), "static" or "dynamic" (at most one wave of resident CTAs).
std::string grid_rule_name(Persistence persistence);
nlohmann::json grid_rule_json(Persistence persistence);

nlohmann::json manifest_to_json(const ExportManifest& manifest);
// `document` names the manifest in error messages. Throws UsageError naming the field.
ExportManifest manifest_from_json(const nlohmann::json& json, const std::string& document);
// Reads and parses `file` (UsageError for an unreadable file or bad JSON).
ExportManifest read_manifest_file(const std::filesystem::path& file);

}  // namespace swr
