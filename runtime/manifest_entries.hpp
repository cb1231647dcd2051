// The parts of manifest.json below the document: one kernel entry per family, and the fields every
// entry shares (GPU, launch, cubin, measurement), written and read strictly the same way for every
// family. export_manifest.cpp assembles the document from them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "generator/problem_json.hpp"
#include "runtime/export_manifest.hpp"
#include "runtime/json_field_reader.hpp"
#include "swr/usage_error.hpp"

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

// A shape read from its fields must be valid and make the key stored beside them; `first_field`
// is the field an invalid shape is reported against.
template <class Problem>
Problem checked_shape(const JsonFieldReader& problem, Problem shape, const char* first_field) {
  try {
    shape.validate();
  } catch (const UsageError& error) {
    problem.fail(first_field,
                 std::string("and its siblings are not a valid shape: ") + error.what());
  }
  require_equal(problem, "key", problem.text("key"), shape.key(), "its fields make the key");
  return shape;
}

// The fields of an attention shape (the forward's and its backward's problem), unchecked.
AttentionProblem read_attention_shape_fields(const JsonFieldReader& problem);

// The entry's "config" object as a Config (`what` names it in the error), checked by
// `check(config)` (a reason it cannot be used, or "") and against "config_key".
template <class Config, class Check>
Config read_config(const JsonFieldReader& kernel, const char* what, Check check) {
  kernel.object("config");  // an object, or the error names the field
  Config config;
  try {
    config = Config::from_json(kernel.value("config"));
  } catch (const UsageError& error) {
    kernel.fail("config", std::string("is not a ") + what + ": " + error.what());
  }
  if (const std::string why = check(config); !why.empty()) {
    kernel.fail("config", std::string("is not a ") + what + " the template instantiates: " + why);
  }
  require_equal(kernel, "config_key", kernel.text("config_key"), config.key(),
                "the config JSON has the key");
  return config;
}

// What an entry of every family starts with: the fields every entry has, its problem (with key
// and family) and its config (with key).
template <class Kernel>
nlohmann::json entry_json(const Kernel& kernel) {
  nlohmann::json json = kernel_base_json(kernel);
  json["problem"] = family_problem_json(kernel.problem);
  json["config_key"] = kernel.config.key();
  json["config"] = kernel.config.to_json();
  return json;
}

// One entry of "kernels" (attention), "gemm_kernels" or "backward_kernels"
// (runtime/manifest_backward_entry.cpp).
nlohmann::json kernel_json(const ExportedKernel& kernel);
nlohmann::json kernel_json(const ExportedGemmKernel& kernel);
nlohmann::json kernel_json(const ExportedBackwardKernel& kernel);
// An attention entry of a manifest of `schema_version`: its "entry" must be the one that version's
// builds wrote (kLegacyAttentionEntryName before kManifestLaunchArgsVersion, then
// kAttentionEntryWithoutLse before kManifestLseVersion).
ExportedKernel read_attention_kernel(const JsonFieldReader& kernel, int schema_version);
ExportedGemmKernel read_gemm_kernel(const JsonFieldReader& kernel);
ExportedBackwardKernel read_backward_kernel(const JsonFieldReader& kernel);

}  // namespace swr
