// swr::AttentionBackward: the catalog's backward choice, its module loaded once per context
// (runtime/kernel_runtime.hpp, as the forward), and the three kernels' launch.
#include "swr/attention_backward.hpp"

#include <string>

#include "generator/attention_backward/attention_backward_family.hpp"
#include "runtime/attention_backward/backward_launcher.hpp"
#include "runtime/catalog_source.hpp"
#include "runtime/context_resources.hpp"
#include "runtime/kernel_runtime.hpp"
#include "swr/usage_error.hpp"

namespace swr {

using BackwardDecision = KernelDecision<TunedAttentionBackwardKernel, AttentionBackwardModule>;

struct AttentionBackward::State {
  State(const TunedCatalog& catalog, AttentionOptions options)
      : runtime(catalog, *catalog.state()->source, std::move(options)) {}

  KernelRuntime runtime;
  // Destroyed before the runtime's catalog, in their own contexts.
  StreamWorkspaces workspaces;
  LoadedKernels<AttentionBackwardModule> kernels;
};

struct PreparedAttentionBackward::Decided {
  AttentionBackwardProblem problem;
  std::string key;  // problem.key(), made once for the error texts
  BackwardDecision decision;
  std::size_t workspace_bytes = 0;
  StreamWorkspaces* workspaces = nullptr;  // the AttentionBackward's, which outlives this
};

AttentionBackward::AttentionBackward(TunedCatalog catalog, AttentionOptions options)
    : state_(std::make_unique<State>(catalog, std::move(options))) {}

AttentionBackward::~AttentionBackward() = default;

PreparedAttentionBackward AttentionBackward::prepare(const AttentionBackwardProblem& problem,
                                                     DqRequirement dq) const {
  auto decided = std::make_shared<PreparedAttentionBackward::Decided>();
  decided->problem = problem;
  decided->key = problem.key();
  decided->decision = state_->runtime.decide(problem, state_->kernels, dq);
  decided->workspace_bytes =
      backward_workspace_layout(problem, decided->decision.choice.kernel->config).bytes;
  decided->workspaces = &state_->workspaces;
  PreparedAttentionBackward prepared;
  prepared.decided_ = std::move(decided);
  return prepared;
}

void AttentionBackward::run(const AttentionBackwardProblem& problem,
                            const AttentionBackwardTensors& tensors, StreamHandle stream,
                            DqRequirement dq) const {
  prepare(problem, dq).run(tensors, stream);
}

namespace {

// A template, so that it needs no access to the private Decided it is given.
template <class Decided>
const Decided& decided_or_throw(const std::shared_ptr<const Decided>& decided) {
  if (!decided) {
    throw UsageError(
        "an empty PreparedAttentionBackward: allowed one AttentionBackward::prepare made");
  }
  return *decided;
}

}  // namespace

void PreparedAttentionBackward::run(const AttentionBackwardTensors& tensors,
                                    StreamHandle stream) const {
  const Decided& decided = decided_or_throw(decided_);
  require_prepared_context(decided.decision.context, decided.key);
  const CUstream cu_stream = static_cast<CUstream>(stream);
  AttentionBackwardBuffers buffers;
  static_cast<AttentionBackwardTensors&>(buffers) = tensors;
  if (decided.decision.choice.kernel->config.persistence == Persistence::dynamic) {
    const StreamWorkspaces::TileCounter pooled =
        decided.workspaces->tile_counter(decided.decision.context, cu_stream);
    buffers.tile_counter = pooled.pointer;
    buffers.tile_counter_zeroed = pooled.zeroed;
  }
  decided.decision.loaded->module->launch(decided.problem, buffers, cu_stream);
}

const TunedBackwardChoice& PreparedAttentionBackward::choice() const {
  return decided_or_throw(decided_).decision.choice;
}

std::size_t PreparedAttentionBackward::workspace_bytes() const {
  return decided_or_throw(decided_).workspace_bytes;
}

unsigned long long PreparedAttentionBackward::context_id() const {
  return decided_ ? decided_->decision.context.id : 0;
}

}  // namespace swr
