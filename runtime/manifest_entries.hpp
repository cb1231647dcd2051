// The parts of manifest.json below the document: one kernel entry per family, and the fields every
// entry shares (GPU, launch, cubin, measurement), written and read strictly the same way for both
// families. export_manifest.cpp assembles the document from them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "runtime/export_manifest.hpp"
#include "runtime/json_field_reader.hpp"

namespace swr {

// A GPU record as JSON ("name", "arch", "sm_count", "l2_bytes", "device_name", "driver_version",
// "cuda_version"): the manifest's "gpu" and the form `swr-tune show --json` prints.
nlohmann::json gpu_json(const db::GpuRecord& gpu);

// The shared fields of an entry: "gpu", "entry", "block_threads", "dynamic_shared_bytes",
// "arch", "cubin" {file, bytes, sha256}, "registers", "compiled_source_hash", "toolkit_version"
// and "measured". Reading checks "entry" against `entry` and "block_threads" against `threads`
// (what the config makes).
nlohmann::json kernel_base_json(const ExportedKernelBase& kernel);
void read_kernel_base(const JsonFieldReader& kernel, const char* entry, int threads,
                      ExportedKernelBase& into);

// Fails `name` unless `found` is `expected`: "is \"found\" but <why> \"expected\"".
void require_equal(const JsonFieldReader& reader, const char* name, const std::string& found,
                   const std::string& expected, const std::string& why);

// A "problem" object's "family" must be `expected`.
void require_family(const JsonFieldReader& problem, const char* expected);
// A "problem" object's "dtype": f16 or bf16, else the error names the field.
DataType read_dtype(const JsonFieldReader& problem);

// One entry of "kernels" (attention) or "gemm_kernels".
nlohmann::json kernel_json(const ExportedKernel& kernel);
nlohmann::json kernel_json(const ExportedGemmKernel& kernel);
// An attention entry of a manifest of `schema_version`: its "entry" must be the one that version's
// builds wrote (kLegacyAttentionEntryName before kManifestLaunchArgsVersion, then
// kAttentionEntryWithoutLse before kManifestLseVersion).
ExportedKernel read_attention_kernel(const JsonFieldReader& kernel, int schema_version);
ExportedGemmKernel read_gemm_kernel(const JsonFieldReader& kernel);

}  // namespace swr
