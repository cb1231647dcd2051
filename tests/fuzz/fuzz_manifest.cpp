// An export's manifest.json as the runtime and `import` read it: any document is refused with a
// UsageError naming the field, or read; nothing else may escape (no json::type_error, no crash).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "runtime/export_manifest.hpp"
#include "swr/usage_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json json = nlohmann::json::parse(data, data + size, nullptr, false);
  if (json.is_discarded()) return 0;  // not JSON: read_manifest_file refuses it before this
  try {
    const swr::ExportManifest manifest = swr::manifest_from_json(json, "fuzz/manifest.json");
    // What was read writes back and reads again the same (one form of each idea).
    const swr::ExportManifest again =
        swr::manifest_from_json(swr::manifest_to_json(manifest), "fuzz/rewritten.json");
    if (again.kernels.size() != manifest.kernels.size() ||
        again.gemm_kernels.size() != manifest.gemm_kernels.size() ||
        again.backward_kernels.size() != manifest.backward_kernels.size()) {
      __builtin_trap();
    }
  } catch (const swr::UsageError&) {
  }
  return 0;
}
