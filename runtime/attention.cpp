// swr::Attention: catalog lookup, cubin, load once per context (runtime/kernel_runtime.hpp), and
// the attention launch.
#include "swr/attention.hpp"

#include <memory>
#include <string>

#include "runtime/attention_launcher.hpp"
#include "runtime/catalog_source.hpp"
#include "runtime/context_resources.hpp"
#include "runtime/kernel_runtime.hpp"
#include "swr/usage_error.hpp"

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

namespace {

using AttentionDecision = KernelDecision<TunedKernel, AttentionKernelModule>;

// The launch both run()s end in, once the kernel is decided and loaded.
void launch_decided(const AttentionDecision& decision, StreamWorkspaces& workspaces,
                    const AttentionProblem& problem, const AttentionTensors& tensors,
                    StreamHandle stream, bool workspace_zeroed = false) {
  if (std::string why = tensor_mismatch(tensors); !why.empty()) {
    throw AttentionRefused("cannot run " + problem.key() + ": " + why);
  }
  const CUstream cu_stream = static_cast<CUstream>(stream);
  AttentionBuffers buffers;
  buffers.q = tensors.q;
  buffers.k = tensors.k;
  buffers.v = tensors.v;
  buffers.o = tensors.o;
  buffers.q_strides = tensors.q_strides;
  buffers.k_strides = tensors.k_strides;
  buffers.v_strides = tensors.v_strides;
  buffers.o_strides = tensors.o_strides;
  buffers.lse = tensors.lse;
  if (decision.choice.kernel->config.persistence == Persistence::dynamic) {
    if (tensors.workspace != 0) {
      buffers.tile_counter = tensors.workspace;
      buffers.tile_counter_zeroed = workspace_zeroed;
    } else {
      const StreamWorkspaces::TileCounter pooled =
          workspaces.tile_counter(decision.context, cu_stream);
      buffers.tile_counter = pooled.pointer;
      buffers.tile_counter_zeroed = pooled.zeroed;
    }
  }
  decision.loaded->module->launch(problem, buffers, cu_stream);
}

}  // namespace

struct PreparedAttention::Decided {
  AttentionProblem problem;
  std::string key;  // problem.key(), made once for the error texts
  AttentionDecision decision;
  StreamWorkspaces* workspaces = nullptr;  // the Attention's, which outlives this
};

void Attention::run(const AttentionProblem& problem, const AttentionTensors& tensors,
                    StreamHandle stream) const {
  if (std::string why = tensor_mismatch(tensors); !why.empty()) {
    throw AttentionRefused("cannot run " + problem.key() + ": " + why);
  }
  // Bad input before any device is looked for (the launch checks the strides again).
  problem.validate();
  resolve_attention_layout(problem, tensors.q_strides, tensors.k_strides, tensors.v_strides,
                           tensors.o_strides);
  launch_decided(state_->decide(problem), state_->workspaces, problem, tensors, stream);
}

PreparedAttention Attention::prepare(const AttentionProblem& problem) const {
  auto decided = std::make_shared<PreparedAttention::Decided>();
  decided->problem = problem;
  decided->key = problem.key();
  decided->decision = state_->decide(problem);
  decided->workspaces = &state_->workspaces;
  PreparedAttention prepared;
  prepared.decided_ = std::move(decided);
  return prepared;
}

void PreparedAttention::run(const AttentionTensors& tensors, StreamHandle stream,
                            bool workspace_zeroed) const {
  if (!decided_)
    throw UsageError("an empty PreparedAttention: allowed one Attention::prepare made");
  const Decided& decided = *decided_;
  require_prepared_context(decided.decision.context, decided.key);
  launch_decided(decided.decision, *decided.workspaces, decided.problem, tensors, stream,
                 workspace_zeroed);
}

const TunedChoice& PreparedAttention::choice() const {
  if (!decided_)
    throw UsageError("an empty PreparedAttention: allowed one Attention::prepare made");
  return decided_->decision.choice;
}

unsigned long long PreparedAttention::context_id() const {
  return decided_ ? decided_->decision.context.id : 0;
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
