// swr::Attention: catalog lookup, cubin, load once per context, launch.
#include "swr/attention.hpp"

#include <map>
#include <mutex>
#include <shared_mutex>

#include "generator/cubin_cache.hpp"
#include "runtime/catalog_state.hpp"
#include "runtime/cubin_arch.hpp"
#include "runtime/cubin_builder.hpp"
#include "runtime/current_context.hpp"
#include "runtime/device_identity.hpp"
#include "runtime/launch_checks.hpp"
#include "runtime/loaded_kernels.hpp"
#include "runtime/stream_workspaces.hpp"
#include "tuner/attention_launcher.hpp"
#include "tuner/driver/cuda_driver.hpp"

namespace swr {

struct Attention::State {
  State(TunedCatalog tuned, AttentionOptions settings)
      : catalog(std::move(tuned)),
        options(std::move(settings)),
        use_nvrtc(nvrtc_allowed(options)),
        cache_dir(options.cubin_cache_dir.empty() ? CubinCache::default_directory()
                                                  : options.cubin_cache_dir) {}

  struct Decision {
    TunedChoice choice;
    const DeviceIdentity* device = nullptr;
    const LoadedKernel* loaded = nullptr;
    CurrentContext context;
  };

  const DeviceIdentity& identity(CUdevice device) {
    {
      std::shared_lock lock(identities_mutex);
      if (auto found = identities.find(device); found != identities.end()) return found->second;
    }
    DeviceIdentity read = identify_device(device);
    std::unique_lock lock(identities_mutex);
    return identities.emplace(device, std::move(read)).first->second;
  }

  // The cubin of a tuned kernel: the export's file, else the cubin cache (by the measured build's
  // key), else NVRTC when allowed.
  std::pair<std::vector<char>, std::string> cubin_for(const TunedKernel& kernel) {
    if (auto exported = catalog.state()->source->exported_cubin(kernel)) {
      return {*exported, "export"};
    }
    try {
      if (std::optional<CompiledKernel> cached = CubinCache(cache_dir).load(kernel.source_hash)) {
        if (cached->ok && cached->arch == kernel.arch) return {cached->cubin, "cubin cache"};
      }
    } catch (const std::exception&) {
      // Not a cache key (a hand-made database): fall through to compiling.
    }
    if (!use_nvrtc) {
      throw AttentionRefused("no cubin for " + kernel.config_key + " (" + kernel.arch +
                             "): it is not in an export, nor in the cubin cache " +
                             cache_dir.string() +
                             ", and NVRTC is off (AttentionOptions::allow_nvrtc or "
                             "SWR_RUNTIME_NVRTC=0); run from `swr-tune export` output instead");
    }
    std::lock_guard lock(builder_mutex);
    if (!builder) {
      try {
        builder = make_nvrtc_cubin_builder(cache_dir);
      } catch (const std::runtime_error& error) {
        throw AttentionRefused("no cubin for " + kernel.config_key + " (" + kernel.arch +
                               ") in an export or the cubin cache, and " + error.what());
      }
    }
    return {builder->build(kernel.problem, kernel.config, kernel.arch).cubin, "NVRTC"};
  }

  Decision decide(const AttentionProblem& problem) {
    problem.validate();
    Decision decision;
    decision.context = current_context();
    decision.device = &identity(decision.context.device);
    const std::string& gpu = options.gpu.empty() ? decision.device->gpu_name : options.gpu;
    decision.choice = catalog.best(gpu, problem);
    if (!decision.choice) {
      throw AttentionRefused("no tuned kernel for " + problem.key() + " on " + gpu + ": " +
                             decision.choice.why_none);
    }
    const TunedKernel& kernel = *decision.choice.kernel;
    if (std::string why = variant_mismatch(kernel, problem); !why.empty()) {
      throw AttentionRefused("cannot run " + problem.key() + ": " + why);
    }
    decision.loaded = &kernels.find_or_load(decision.context, decision.choice.kernel, [&] {
      // Checked before the cubin is even fetched; once loaded, the device has passed it.
      const std::string arch_problem = cubin_arch_mismatch(
          kernel.arch, decision.device->compute_major, decision.device->compute_minor);
      if (!arch_problem.empty()) {
        throw AttentionRefused("cannot run " + kernel.config_key + " on " +
                               decision.device->description() + ": " + arch_problem);
      }
      auto [cubin, origin] = cubin_for(kernel);
      LoadedKernel loaded;
      loaded.module = std::make_unique<AttentionKernelModule>(
          CudaDriver::get(), cubin, kernel.config, kernel.dynamic_shared_bytes,
          decision.device->sm_count);
      loaded.context = decision.context.context;
      loaded.cubin_origin = std::move(origin);
      return loaded;
    });
    return decision;
  }

  TunedCatalog catalog;
  AttentionOptions options;
  bool use_nvrtc = true;
  std::filesystem::path cache_dir;

  std::shared_mutex identities_mutex;
  std::map<CUdevice, DeviceIdentity> identities;  // guarded by identities_mutex
  std::mutex builder_mutex;
  std::unique_ptr<CubinBuilder> builder;  // made on first need, guarded by builder_mutex
  // Destroyed before the catalog, in their own contexts.
  StreamWorkspaces workspaces;
  LoadedKernels kernels;
};

Attention::Attention(TunedCatalog catalog, AttentionOptions options)
    : state_(std::make_unique<State>(std::move(catalog), std::move(options))) {}

Attention::~Attention() = default;

void Attention::run(const AttentionProblem& problem, const AttentionTensors& tensors,
                    StreamHandle stream) const {
  if (std::string why = tensor_mismatch(tensors); !why.empty()) {
    throw AttentionRefused("cannot run " + problem.key() + ": " + why);
  }
  const State::Decision decision = state_->decide(problem);
  const CUstream cu_stream = static_cast<CUstream>(stream);
  AttentionBuffers buffers;
  buffers.q = tensors.q;
  buffers.k = tensors.k;
  buffers.v = tensors.v;
  buffers.o = tensors.o;
  if (decision.choice.kernel->config.persistence == Persistence::dynamic) {
    buffers.tile_counter = tensors.workspace != 0
                               ? tensors.workspace
                               : state_->workspaces.tile_counter(decision.context, cu_stream);
  }
  decision.loaded->module->launch(problem, buffers, cu_stream);
}

AttentionPlan Attention::plan(const AttentionProblem& problem) const {
  const State::Decision decision = state_->decide(problem);
  AttentionPlan plan;
  plan.choice = decision.choice;
  plan.cubin_origin = decision.loaded->cubin_origin;
  plan.arch = decision.choice.kernel->arch;
  plan.device = decision.device->description();
  plan.grid = decision.loaded->module->grid_size(problem);
  plan.block_threads = decision.choice.kernel->config.threads();
  plan.dynamic_shared_bytes = decision.choice.kernel->dynamic_shared_bytes;
  return plan;
}

}  // namespace swr
