// swr::Gemm: catalog lookup, cubin, load once per context (runtime/kernel_runtime.hpp), and the
// GEMM launch, whose geometry GemmKernelModule decides as it does for the tuner.
#include "swr/gemm.hpp"

#include "runtime/catalog_source.hpp"
#include "runtime/gemm_launcher.hpp"
#include "runtime/kernel_runtime.hpp"

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

void Gemm::run(const GemmProblem& problem, const GemmTensors& tensors, StreamHandle stream) const {
  if (std::string why = tensor_mismatch(tensors); !why.empty()) {
    throw GemmRefused("cannot run " + problem.key() + ": " + why);
  }
  const auto decision = state_->decide(problem);
  GemmBuffers buffers;
  buffers.a = tensors.a;
  buffers.b = tensors.b;
  buffers.c = tensors.c;
  // A module is shared by the variants of one binary: the tuned config brings its own swizzle.
  decision.loaded->module->launch(problem, buffers, static_cast<CUstream>(stream),
                                  decision.choice.kernel->config);
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
