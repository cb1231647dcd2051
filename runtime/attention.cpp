// swr::Attention: catalog lookup, cubin, load once per context (runtime/kernel_runtime.hpp), and
// the attention launch.
#include "swr/attention.hpp"

#include "runtime/attention_launcher.hpp"
#include "runtime/catalog_source.hpp"
#include "runtime/context_resources.hpp"
#include "runtime/kernel_runtime.hpp"

namespace swr {

struct Attention::State {
  State(const TunedCatalog& catalog, AttentionOptions options)
      : runtime(catalog, *catalog.state()->source, std::move(options)) {}

  KernelDecision<TunedKernel, AttentionKernelModule> decide(const AttentionProblem& problem) {
    return runtime.decide(problem, kernels);
  }

  KernelRuntime runtime;
  // Destroyed before the runtime's catalog, in their own contexts.
  StreamWorkspaces workspaces;
  LoadedKernels<AttentionKernelModule> kernels;
};

Attention::Attention(TunedCatalog catalog, AttentionOptions options)
    : state_(std::make_unique<State>(catalog, std::move(options))) {}

Attention::~Attention() = default;

void Attention::run(const AttentionProblem& problem, const AttentionTensors& tensors,
                    StreamHandle stream) const {
  if (std::string why = tensor_mismatch(tensors); !why.empty()) {
    throw AttentionRefused("cannot run " + problem.key() + ": " + why);
  }
  const auto decision = state_->decide(problem);
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
  const auto decision = state_->decide(problem);
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
