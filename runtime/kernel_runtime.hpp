// What swr::Attention and swr::Gemm share between a call and its launch: the calling thread's
// context and device, the catalog lookup, the checks made before loading (a variant compiled for
// another shape, a cubin arch the device cannot run), the cubin (the export's file, else the
// cubin cache, else NVRTC when allowed), and loading it once per context. Only the launch itself
// is the family's.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "driver/device_identity.hpp"
#include "runtime/catalog_source.hpp"
#include "runtime/context_resources.hpp"
#include "runtime/cubin_builder.hpp"
#include "swr/attention.hpp"
#include "swr/attention_backward_problem.hpp"
#include "swr/gemm.hpp"
#include "swr/runtime_options.hpp"
#include "swr/tuned_catalog.hpp"

namespace swr {

// What is checked before a tuned kernel is loaded or launched, so that a call that cannot run is
// refused with a reason instead of faulting on the device.
// Why `kernel` cannot run `problem` (its head dim, dtype or causal mode is compiled in and
// differs), or empty when it can.
std::string variant_mismatch(const TunedKernel& kernel, const AttentionProblem& problem);
// The same for the backward, whose compiled part is its forward shape's.
std::string variant_mismatch(const TunedAttentionBackwardKernel& kernel,
                             const AttentionBackwardProblem& problem);
// The same for a GEMM, whose dtype is compiled in (m, n and k are launch arguments).
std::string variant_mismatch(const TunedGemmKernel& kernel, const GemmProblem& problem);

// Why the tensors cannot be used (a null Q, K, V or O; a null A, B or C), or empty.
std::string tensor_mismatch(const AttentionTensors& tensors);
std::string tensor_mismatch(const GemmTensors& tensors);

// Throws UsageError unless the calling thread's current context is `prepared`, the one a prepared
// launch (PreparedAttention, PreparedGemm) loaded its kernel into: a kernel runs in its own
// context only; a thread with no current context gets `prepared` made current (as run() would
// make a primary context current). Two driver queries, no allocation.
void require_prepared_context(const CurrentContext& prepared, const std::string& problem_key);

// NVRTC allowed by the options and not turned off by SWR_RUNTIME_NVRTC=0 (or off, false, no).
bool nvrtc_allowed(const RuntimeOptions& options);

// The tuned kernel type of a problem type.
template <class Problem>
struct TunedKernelFor;
template <>
struct TunedKernelFor<AttentionProblem> {
  using type = TunedKernel;
};
template <>
struct TunedKernelFor<GemmProblem> {
  using type = TunedGemmKernel;
};
template <>
struct TunedKernelFor<AttentionBackwardProblem> {
  using type = TunedAttentionBackwardKernel;
};

// What a call decided: the choice, the device, the loaded kernel and the context it runs in.
template <class Kernel, class Module>
struct KernelDecision {
  TunedChoiceOf<Kernel> choice;
  const DeviceIdentity* device = nullptr;
  const LoadedKernel<Module>* loaded = nullptr;
  CurrentContext context;
};

class KernelRuntime {
 public:
  // `source` is the one behind `catalog` (for the export's cubins); it lives as long as the
  // catalog this runtime keeps.
  KernelRuntime(TunedCatalog catalog, const CatalogSource& source, RuntimeOptions options);
  KernelRuntime(const KernelRuntime&) = delete;
  KernelRuntime& operator=(const KernelRuntime&) = delete;

  // Validates the problem, looks it up for the calling thread's device and loads its kernel into
  // `kernels` on first use. Throws UsageError for an invalid problem, KernelRefused for a call
  // that cannot run. `filter`: what the catalog's lookup also takes (the backward's DqRequirement).
  template <class Module, class Problem, class... Filter>
  KernelDecision<typename TunedKernelFor<Problem>::type, Module> decide(
      const Problem& problem, LoadedKernels<Module>& kernels, const Filter&... filter) {
    using Kernel = typename TunedKernelFor<Problem>::type;
    problem.validate();
    KernelDecision<Kernel, Module> decision;
    decision.context = current_context();
    decision.device = &identity(decision.context.device);
    const std::string& gpu = options_.gpu.empty() ? decision.device->gpu_name : options_.gpu;
    decision.choice = catalog_.best(gpu, problem, filter...);
    if (!decision.choice) {
      throw KernelRefused("no tuned kernel for " + problem.key() + " on " + gpu + ": " +
                          decision.choice.why_none);
    }
    const Kernel& kernel = *decision.choice.kernel;
    if (std::string why = variant_mismatch(kernel, problem); !why.empty()) {
      throw KernelRefused("cannot run " + problem.key() + ": " + why);
    }
    decision.loaded = &kernels.find_or_load(decision.context, decision.choice.kernel, [&] {
      // Checked before the cubin is even fetched; once loaded, the device has passed it.
      require_runnable(kernel, *decision.device);
      Cubin cubin = cubin_for(kernel);
      LoadedKernel<Module> loaded;
      loaded.module =
          std::make_unique<Module>(CudaDriver::get(), cubin.bytes, kernel.config,
                                   kernel.dynamic_shared_bytes, decision.device->sm_count);
      loaded.context = decision.context.context;
      loaded.cubin_origin = std::move(cubin.origin);
      return loaded;
    });
    return decision;
  }

 private:
  struct Cubin {
    std::vector<char> bytes;
    std::string origin;  // "export", "cubin cache" or "NVRTC"
  };

  const DeviceIdentity& identity(CUdevice device);
  // Throws KernelRefused when the device cannot run a cubin of the kernel's arch.
  void require_runnable(const TunedKernelBase& kernel, const DeviceIdentity& device) const;
  // The export's file, else the cubin cache (by the measured build's key), else NVRTC when
  // allowed; KernelRefused when there is none.
  Cubin cubin_for(const TunedKernel& kernel);
  Cubin cubin_for(const TunedGemmKernel& kernel);
  Cubin cubin_for(const TunedAttentionBackwardKernel& kernel);
  // The export's file or the cubin cache's with `entry` (the family's current launch ABI);
  // nullopt when neither has it.
  std::optional<Cubin> stored_cubin(const TunedKernelBase& kernel, const std::string& entry) const;
  // Compiles with NVRTC when allowed, else KernelRefused.
  template <class Kernel>
  Cubin compiled_cubin(const Kernel& kernel);

  TunedCatalog catalog_;
  const CatalogSource& source_;
  RuntimeOptions options_;
  bool use_nvrtc_ = true;
  std::filesystem::path cache_dir_;

  std::shared_mutex identities_mutex_;
  std::map<CUdevice, DeviceIdentity> identities_;  // guarded by identities_mutex_
  std::mutex builder_mutex_;
  std::unique_ptr<CubinBuilder> builder_;  // made on first need, guarded by builder_mutex_
};

}  // namespace swr
