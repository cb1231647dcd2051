#include "runtime/kernel_runtime.hpp"

#include <cstdlib>
#include <initializer_list>
#include <utility>

#include "driver/device_identity.hpp"
#include "generator/attention_backward/attention_backward_family.hpp"
#include "generator/cubin_cache.hpp"
#include "generator/gemm_kernel_source.hpp"
#include "generator/kernel_source.hpp"
#include "swr/usage_error.hpp"

namespace swr {

std::string variant_mismatch(const TunedKernel& kernel, const AttentionProblem& problem) {
  const AttentionProblem& compiled = kernel.problem;
  std::string differs;
  auto add = [&differs](const std::string& what) {
    differs += (differs.empty() ? "" : ", ") + what;
  };
  if (compiled.head_dim != problem.head_dim) {
    add("head dim " + std::to_string(compiled.head_dim) + ", asked " +
        std::to_string(problem.head_dim));
  }
  if (compiled.dtype != problem.dtype) {
    add("dtype " + std::string(to_string(compiled.dtype)) + ", asked " +
        std::string(to_string(problem.dtype)));
  }
  if (compiled.causal != problem.causal) {
    add(compiled.causal ? "causal, asked non-causal" : "non-causal, asked causal");
  }
  if (differs.empty()) return {};
  return "variant " + kernel.config_key + " is compiled for " + differs;
}

std::string variant_mismatch(const TunedAttentionBackwardKernel& kernel,
                             const AttentionBackwardProblem& problem) {
  TunedKernel forward;
  forward.config_key = kernel.config_key;
  forward.problem = kernel.problem.shape;
  return variant_mismatch(forward, problem.shape);
}

std::string variant_mismatch(const TunedGemmKernel& kernel, const GemmProblem& problem) {
  if (kernel.problem.dtype == problem.dtype) return {};
  return "variant " + kernel.config_key + " is compiled for dtype " +
         std::string(to_string(kernel.problem.dtype)) + ", asked " +
         std::string(to_string(problem.dtype));
}

namespace {

std::string null_pointers(std::initializer_list<std::pair<const char*, DevicePointer>> pointers) {
  std::string missing;
  for (const auto& [name, pointer] : pointers) {
    if (pointer == 0) missing += (missing.empty() ? "" : ", ") + std::string(name);
  }
  return missing.empty() ? std::string() : "null device pointer for " + missing;
}

}  // namespace

std::string tensor_mismatch(const AttentionTensors& tensors) {
  return null_pointers({{"q", tensors.q}, {"k", tensors.k}, {"v", tensors.v}, {"o", tensors.o}});
}

std::string tensor_mismatch(const GemmTensors& tensors) {
  return null_pointers({{"a", tensors.a}, {"b", tensors.b}, {"c", tensors.c}});
}

void require_prepared_context(const CurrentContext& prepared, const std::string& problem_key) {
  const CudaDriver& driver = CudaDriver::get();
  CUcontext current = nullptr;
  SWR_CU(driver, cuCtxGetCurrent(&current));
  if (current == nullptr) {  // a thread with none: the prepared one, as current_context() would
    SWR_CU(driver, cuCtxSetCurrent(prepared.context));
    current = prepared.context;
  }
  unsigned long long current_id = 0;
  // A context's pointer may be reused by a later one: the id tells them apart.
  if (current == prepared.context) {
    driver.check(driver.cuCtxGetId(current, &current_id), "cuCtxGetId");
    if (current_id == prepared.id) return;
  }
  throw UsageError("the launch of " + problem_key + " was prepared in the CUDA context " +
                   std::to_string(prepared.id) + " (device " + std::to_string(prepared.device) +
                   "), not the calling thread's current one: allowed that context current (or "
                   "prepare again in this one)");
}

bool nvrtc_allowed(const RuntimeOptions& options) {
  if (!options.allow_nvrtc) return false;
  const char* setting = std::getenv("SWR_RUNTIME_NVRTC");
  if (setting == nullptr) return true;
  const std::string value = setting;
  return !(value == "0" || value == "off" || value == "false" || value == "no");
}

KernelRuntime::KernelRuntime(TunedCatalog catalog, const CatalogSource& source,
                             RuntimeOptions options)
    : catalog_(std::move(catalog)),
      source_(source),
      options_(std::move(options)),
      use_nvrtc_(nvrtc_allowed(options_)),
      cache_dir_(options_.cubin_cache_dir.empty() ? CubinCache::default_directory()
                                                  : options_.cubin_cache_dir) {}

const DeviceIdentity& KernelRuntime::identity(CUdevice device) {
  {
    std::shared_lock lock(identities_mutex_);
    if (auto found = identities_.find(device); found != identities_.end()) return found->second;
  }
  DeviceIdentity read = identify_device(device);
  std::unique_lock lock(identities_mutex_);
  return identities_.emplace(device, std::move(read)).first->second;
}

void KernelRuntime::require_runnable(const TunedKernelBase& kernel,
                                     const DeviceIdentity& device) const {
  const std::string why =
      cubin_arch_mismatch(kernel.arch, device.compute_major, device.compute_minor);
  if (!why.empty()) {
    throw KernelRefused("cannot run " + kernel.config_key + " on " + device.description() + ": " +
                        why);
  }
}

std::optional<KernelRuntime::Cubin> KernelRuntime::stored_cubin(const TunedKernelBase& kernel,
                                                                const std::string& entry) const {
  if (auto exported = source_.exported_cubin(kernel)) return Cubin{*exported, "export"};
  try {
    // A cubin of an older launch ABI (another entry name) is never launched: compiled anew below.
    if (std::optional<CompiledKernel> cached = CubinCache(cache_dir_).load(kernel.source_hash)) {
      if (cached->ok && cached->arch == kernel.arch && cached->entry == entry) {
        return Cubin{cached->cubin, "cubin cache"};
      }
    }
  } catch (const std::exception&) {
    // Not a cache key (a hand-made database): fall through to compiling.
  }
  return std::nullopt;
}

template <class Kernel>
KernelRuntime::Cubin KernelRuntime::compiled_cubin(const Kernel& kernel) {
  if (!use_nvrtc_) {
    throw KernelRefused("no cubin for " + kernel.config_key + " (" + kernel.arch +
                        "): it is not in an export, nor in the cubin cache " + cache_dir_.string() +
                        ", and NVRTC is off (RuntimeOptions::allow_nvrtc or "
                        "SWR_RUNTIME_NVRTC=0); run from `swr-tune export` output instead");
  }
  std::lock_guard lock(builder_mutex_);
  if (!builder_) {
    try {
      builder_ = make_nvrtc_cubin_builder(cache_dir_);
    } catch (const std::runtime_error& error) {
      throw KernelRefused("no cubin for " + kernel.config_key + " (" + kernel.arch +
                          ") in an export or the cubin cache, and " + error.what());
    }
  }
  return {builder_->build(kernel.problem, kernel.config, kernel.arch).cubin, "NVRTC"};
}

KernelRuntime::Cubin KernelRuntime::cubin_for(const TunedKernel& kernel) {
  if (std::optional<Cubin> stored = stored_cubin(kernel, kAttentionEntryName)) {
    return *std::move(stored);
  }
  return compiled_cubin(kernel);
}

KernelRuntime::Cubin KernelRuntime::cubin_for(const TunedAttentionBackwardKernel& kernel) {
  if (std::optional<Cubin> stored = stored_cubin(kernel, kBackwardEntryName)) {
    return *std::move(stored);
  }
  return compiled_cubin(kernel);
}

KernelRuntime::Cubin KernelRuntime::cubin_for(const TunedGemmKernel& kernel) {
  if (std::optional<Cubin> stored = stored_cubin(kernel, gemm_entry_name(kernel.config))) {
    return *std::move(stored);
  }
  return compiled_cubin(kernel);
}

}  // namespace swr
