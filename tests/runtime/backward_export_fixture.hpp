// The backward export tests' database: backward shapes whose fastest variant is atomic with a
// slower deterministic one, atomic only, deterministic itself, and a warp-specialized wgmma one,
// beside a forward shape; exported with stand-in cubins (FakeCubinBuilder).
#pragma once

#include "tests/runtime/export_directory_test.hpp"
#include "tests/runtime/runtime_fixtures.hpp"

namespace swr::test {

inline constexpr const char* kBackwardCyclic = "bwd-m64n128w8s2-cyclic-grid-head_major";
inline constexpr const char* kBackwardSawtooth = "bwd-m64n128w8s2-sawtooth-grid-head_major";
inline constexpr const char* kBackwardDeterministic = "bwd-m64n128w8s2-cyclic-grid-head_major-det";
inline constexpr const char* kBackwardDeterministicSlow =
    "bwd-m64n64w4s2-cyclic-grid-head_major-det";
inline constexpr const char* kBackwardWarpSpecialized =
    "bwd-wgmma-m64n128w12s2-cyclic-dynamic-head_major-lag";
inline constexpr const char* kForwardOfBackwardShape = "m128n64w8s2-cyclic-grid-head_major";

class BackwardExportTest : public ExportDirectoryTest {
 protected:
  BackwardExportTest() : tuned_(directory_.path() / "results.db") {
    tuned_.add(causal_, kBackwardCyclic, 2.0);
    tuned_.add(causal_, kBackwardSawtooth, 1.8);
    tuned_.add(causal_, kBackwardDeterministicSlow, 2.6);
    tuned_.add(causal_, kBackwardDeterministic, 2.2, "2026-11-20T10:00:00.000Z");
    // The faster deterministic variant's newest measurement failed: it no longer counts.
    tuned_.add_failure(causal_, kBackwardDeterministic, "2026-11-21T10:00:00.000Z");
    tuned_.add(atomic_only_, kBackwardCyclic, 0.5);
    tuned_.add(deterministic_fastest_, kBackwardDeterministic, 0.3);
    tuned_.add(deterministic_fastest_, kBackwardCyclic, 0.4);
    tuned_.add(warp_specialized_, kBackwardWarpSpecialized, 1.0);
    tuned_.add(causal_.shape, kForwardOfBackwardShape, 1.0);
  }

  ExportSummary export_all(const FakeCubinBuilder& builder = FakeCubinBuilder(),
                           bool allow_changed_source = false) {
    return export_h200(tuned_.database(), out_, builder, allow_changed_source);
  }

  TunedDatabase tuned_;
  // By key, as the manifest lists them: deterministic_fastest_ (one entry), causal_ (its fastest
  // and its fastest deterministic variant), warp_specialized_, atomic_only_.
  const AttentionBackwardProblem deterministic_fastest_{attention_shape(1, 8, 2048, 128)};
  const AttentionBackwardProblem causal_{attention_shape(2, 16, 4096, 128, true)};
  const AttentionBackwardProblem warp_specialized_{attention_shape(2, 16, 8192, 128)};
  const AttentionBackwardProblem atomic_only_{attention_shape(4, 8, 1024, 64, true)};
};

}  // namespace swr::test
