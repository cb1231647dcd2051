// swr::Gemm: catalog lookup, cubin, load once per context (runtime/kernel_runtime.hpp), and the
// GEMM launch, whose geometry GemmKernelModule decides as it does for the tuner.
#include "swr/gemm.hpp"

#include <memory>
#include <string>

#include "runtime/catalog_source.hpp"
#include "runtime/gemm_launcher.hpp"
#include "runtime/kernel_runtime.hpp"
#include "swr/usage_error.hpp"

namespace swr {

struct Gemm::State {
  State(const TunedCatalog& catalog, RuntimeOptions options)
      : runtime(catalog, *catalog.state()->source, std::move(options)) {}

  KernelDecision<TunedGemmKernel, GemmKernelModule> decide(const GemmProblem& problem) {
    return runtime.decide(problem, kernels);
  }

  KernelRuntime runtime;
  // Destroyed before the runtime's catalog, in their own contexts.
  LoadedKernels<GemmKernelModule> kernels;
};

Gemm::Gemm(TunedCatalog catalog, RuntimeOptions options)
    : state_(std::make_unique<State>(catalog, std::move(options))) {}

Gemm::~Gemm() = default;

namespace {

using GemmDecision = KernelDecision<TunedGemmKernel, GemmKernelModule>;

// The launch both run()s end in, once the kernel is decided and loaded.
void launch_decided(const GemmDecision& decision, const GemmProblem& problem,
                    const GemmTensors& tensors, StreamHandle stream) {
  if (std::string why = tensor_mismatch(tensors); !why.empty()) {
    throw GemmRefused("cannot run " + problem.key() + ": " + why);
  }
  GemmBuffers buffers;
  buffers.a = tensors.a;
  buffers.b = tensors.b;
  buffers.c = tensors.c;
  // A module is shared by the variants of one binary: the tuned config brings its own swizzle.
  decision.loaded->module->launch(problem, buffers, static_cast<CUstream>(stream),
                                  decision.choice.kernel->config);
}

}  // namespace

struct PreparedGemm::Decided {
  GemmProblem problem;
  std::string key;  // problem.key(), made once for the error texts
  GemmDecision decision;
};

void Gemm::run(const GemmProblem& problem, const GemmTensors& tensors, StreamHandle stream) const {
  if (std::string why = tensor_mismatch(tensors); !why.empty()) {
    throw GemmRefused("cannot run " + problem.key() + ": " + why);
  }
  launch_decided(state_->decide(problem), problem, tensors, stream);
}

PreparedGemm Gemm::prepare(const GemmProblem& problem) const {
  auto decided = std::make_shared<PreparedGemm::Decided>();
  decided->problem = problem;
  decided->key = problem.key();
  decided->decision = state_->decide(problem);
  PreparedGemm prepared;
  prepared.decided_ = std::move(decided);
  return prepared;
}

void PreparedGemm::run(const GemmTensors& tensors, StreamHandle stream) const {
  if (!decided_) throw UsageError("an empty PreparedGemm: allowed one Gemm::prepare made");
  require_prepared_context(decided_->decision.context, decided_->key);
  launch_decided(decided_->decision, decided_->problem, tensors, stream);
}

const TunedGemmChoice& PreparedGemm::choice() const {
  if (!decided_) throw UsageError("an empty PreparedGemm: allowed one Gemm::prepare made");
  return decided_->decision.choice;
}

unsigned long long PreparedGemm::context_id() const {
  return decided_ ? decided_->decision.context.id : 0;
}

GemmPlan Gemm::plan(const GemmProblem& problem) const {
  const auto decision = state_->decide(problem);
  const GemmLaunchGeometry geometry =
      decision.loaded->module->geometry(problem, decision.choice.kernel->config);
  GemmPlan plan;
  plan.choice = decision.choice;
  plan.cubin_origin = decision.loaded->cubin_origin;
  plan.arch = decision.choice.kernel->arch;
  plan.device = decision.device->description();
  plan.grid = geometry.grid;
  plan.block_threads = geometry.block_threads;
  plan.dynamic_shared_bytes = geometry.dynamic_shared_bytes;
  plan.swizzle_axis = geometry.swizzle.axis;
  plan.swizzle_group = geometry.swizzle.group;
  return plan;
}

}  // namespace swr
