// A kernel family, as the shared machinery (space, compile, tune, store, show, export) sees it: a
// small descriptor type naming its problem and config and the few things only it knows. A new
// family is its templates, its problem and config, and one of these (plus what measures it on the
// GPU: tuner/tuning/measured_family.hpp); the machinery is written once against the descriptor.
//
//   struct SomeFamily {
//     using Problem = ...;                       // key(), to_json(), from_json(), validate(),
//     using Config = ...;                        //   flops(); key(), from_key(), to/from_json()
//     static constexpr const char* kName;        // "attention", "attention-backward": one name
//                                                //   everywhere (--family, the database,
//                                                manifests)
//     static constexpr const char* kMeasuredEntry;  // the kernel the L2 counters measure
//     static SpaceOf<Config> space(const Problem&, const GpuProfile&);
//     static ResourceUse resources(const Problem&, const Config&, const GpuProfile&,
//                                  int compiled_registers = -1);
//     static KernelSource render(const Problem&, const Config&);
//   };
//
// Both attention passes are descriptors here; the GEMM family keeps its own session for now (its
// variants share kernel binaries across swizzles and carry cuBLAS's time as their baseline).
#pragma once

#include "generator/attention_space.hpp"
#include "generator/kernel_source.hpp"
#include "generator/resource_model.hpp"
#include "generator/variant_space.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr {

inline constexpr const char* kAttentionFamilyName = "attention";
inline constexpr const char* kAttentionBackwardFamilyName = "attention-backward";
inline constexpr const char* kGemmFamilyName = "gemm";

// The attention forward.
struct AttentionFamily {
  using Problem = AttentionProblem;
  using Config = AttentionConfig;
  static constexpr const char* kName = kAttentionFamilyName;
  static constexpr const char* kMeasuredEntry = kAttentionEntryName;
  static SpaceOf<Config> space(const Problem& problem, const GpuProfile& gpu) {
    return build_attention_space(problem, gpu);
  }
  static ResourceUse resources(const Problem& problem, const Config& config, const GpuProfile& gpu,
                               int compiled_registers = -1) {
    return compiled_registers < 0
               ? attention_resource_use(problem, config, gpu)
               : attention_resource_use(problem, config, gpu, compiled_registers);
  }
  static KernelSource render(const Problem& problem, const Config& config) {
    return render_attention_kernel(problem, config);
  }
};

}  // namespace swr
