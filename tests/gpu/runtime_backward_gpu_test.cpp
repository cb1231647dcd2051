// swr::AttentionBackward from an export on the present GPU. A backward variant of each dQ mode
// (atomic, the fastest; deterministic, slower) and the forward that writes the log-sum-exp, built
// by NVRTC for this device's arch and recorded as tuned, are exported; the backward then runs from
// the export with NVRTC off and an empty cubin cache (so its module can only be the export's) and
// from the database (through the cubin cache), on the same inputs after the same forward: dK and
// dV, and the deterministic variant's dQ, agree bit for bit; every gradient of both runs, the
// atomic dQ (summed in whatever order CTAs arrive) included, is held to the CPU reference within
// the backward GPU tests' tolerance. Skips without a device.
#include <gtest/gtest.h>

#include <random>

#include "db/records.hpp"
#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "runtime/kernel_exporter.hpp"
#include "swr/attention.hpp"
#include "swr/attention_backward.hpp"
#include "swr/device_buffer.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/random_sixteen_bit.hpp"
#include "tests/runtime/runtime_fixtures.hpp"
#include "tuner/attention_backward/reference_backward.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/reference_attention.hpp"

namespace swr::test {
namespace {

using gpu_test::random_elements;

// Odd lengths (a partial Q and K/V tile), causal, two query heads a K/V head.
AttentionProblem backward_shape() {
  AttentionProblem problem = attention_shape(2, 4, 333, 64, true);
  problem.kv_heads = 2;
  return problem;
}
constexpr const char* kForward = "m64n64w4s2-cyclic-grid-head_major";
constexpr const char* kAtomic = "bwd-m64n64w4s2-cyclic-grid-head_major";
constexpr const char* kDeterministic = "bwd-m64n64w4s2-cyclic-grid-head_major-det";

struct Gradients {
  std::vector<std::uint16_t> dq, dk, dv;
};

class BackwardRuntimeOnGpu : public ::testing::Test {
 protected:
  // Builds for this device, records the builds as tuned (the atomic variant the fastest) and
  // exports them once for the suite.
  static void SetUpTestSuite() {
    if (cuda_device_count() == 0) return;
    scratch_ = new TemporaryDirectory();
    const GpuProfile present = *detect_present_gpu();
    const std::unique_ptr<CubinBuilder> builder = make_nvrtc_cubin_builder(cache_dir());
    db::GpuRecord gpu = db::GpuRecord::from_profile(present);
    gpu.driver_version = "test";
    gpu.cuda_version = "13.0";
    TunedDatabase tuned(database(), gpu);
    const AttentionProblem shape = backward_shape();
    tuned.add(shape, kForward, 0.05, "",
              builder->build(shape, config_named(kForward), present.arch).source_hash);
    const AttentionBackwardProblem backward{shape};
    for (const auto& [key, median_ms] : {std::pair{kAtomic, 0.1}, std::pair{kDeterministic, 0.2}}) {
      tuned.add(backward, key, median_ms, "",
                builder->build(backward, backward_config_named(key), present.arch).source_hash);
    }
    ExportOptions options;
    options.gpu = present.name;
    options.out_dir = export_dir();
    export_kernels(tuned.database(), *builder, options);
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }
  void SetUp() override { SWR_REQUIRE_GPU(); }

  static std::filesystem::path export_dir() { return scratch_->path() / "export"; }
  static std::filesystem::path database() { return scratch_->path() / "results.db"; }
  static std::filesystem::path cache_dir() { return scratch_->path() / "cubins"; }

  // The forward (from the export) writes O and the log-sum-exp, then `backward` computes the
  // gradients, its outputs poisoned (NaN) first.
  static Gradients run(const AttentionBackward& backward, DqRequirement dq,
                       const std::vector<std::uint16_t>& q, const std::vector<std::uint16_t>& k,
                       const std::vector<std::uint16_t>& v, const std::vector<std::uint16_t>& d_o) {
    const AttentionProblem shape = backward_shape();
    AttentionOptions no_nvrtc;
    no_nvrtc.allow_nvrtc = false;
    const Attention forward(TunedCatalog::open_export(export_dir()), no_nvrtc);
    const std::size_t q_bytes = q.size() * 2, kv_bytes = k.size() * 2;
    DeviceBuffer q_in(q_bytes), k_in(kv_bytes), v_in(kv_bytes), o(q_bytes), d_o_in(q_bytes);
    DeviceBuffer lse(static_cast<std::size_t>(shape.batch) * shape.heads * shape.seq_q * 4);
    DeviceBuffer dq_out(q_bytes), dk_out(kv_bytes), dv_out(kv_bytes);
    q_in.copy_from_host(q.data(), q_bytes);
    k_in.copy_from_host(k.data(), kv_bytes);
    v_in.copy_from_host(v.data(), kv_bytes);
    d_o_in.copy_from_host(d_o.data(), q_bytes);
    AttentionTensors forward_tensors{q_in.pointer(), k_in.pointer(), v_in.pointer(), o.pointer()};
    forward_tensors.lse = lse.pointer();
    forward.run(shape, forward_tensors);

    const PreparedAttentionBackward prepared =
        backward.prepare(AttentionBackwardProblem{shape}, dq);
    DeviceBuffer workspace(prepared.workspace_bytes());
    const CudaDriver& driver = CudaDriver::get();
    for (const DeviceBuffer* out : {&dq_out, &dk_out, &dv_out}) {
      SWR_CU(driver, cuMemsetD8Async(out->pointer(), 0xff, out->size(), nullptr));
    }
    AttentionBackwardTensors tensors;
    tensors.q = q_in.pointer();
    tensors.k = k_in.pointer();
    tensors.v = v_in.pointer();
    tensors.o = o.pointer();
    tensors.d_o = d_o_in.pointer();
    tensors.lse = lse.pointer();
    tensors.dq = dq_out.pointer();
    tensors.dk = dk_out.pointer();
    tensors.dv = dv_out.pointer();
    tensors.workspace = workspace.pointer();
    tensors.workspace_bytes = workspace.size();
    prepared.run(tensors);
    synchronize();
    Gradients gradients{std::vector<std::uint16_t>(q.size()), std::vector<std::uint16_t>(k.size()),
                        std::vector<std::uint16_t>(v.size())};
    dq_out.copy_to_host(gradients.dq.data(), q_bytes);
    dk_out.copy_to_host(gradients.dk.data(), kv_bytes);
    dv_out.copy_to_host(gradients.dv.data(), kv_bytes);
    return gradients;
  }

  static TemporaryDirectory* scratch_;
};

TemporaryDirectory* BackwardRuntimeOnGpu::scratch_ = nullptr;

TEST_F(BackwardRuntimeOnGpu, RunsFromTheExportAsFromTheDatabase) {
  const DeviceContext context;
  const AttentionProblem shape = backward_shape();
  std::mt19937 rng(2027);
  const std::size_t q_count =
      static_cast<std::size_t>(shape.batch) * shape.heads * shape.seq_q * shape.head_dim;
  const std::size_t kv_count =
      static_cast<std::size_t>(shape.batch) * shape.kv_head_count() * shape.seq_kv * shape.head_dim;
  const auto q = random_elements(shape.dtype, q_count, rng);
  const auto k = random_elements(shape.dtype, kv_count, rng);
  const auto v = random_elements(shape.dtype, kv_count, rng);
  const auto d_o = random_elements(shape.dtype, q_count, rng);
  const BackwardReference reference = reference_attention_backward(shape, q, k, v, d_o);
  const double tolerance = relative_error_tolerance(shape.dtype);

  // From the export: no NVRTC and a cubin cache that holds nothing.
  AttentionOptions export_only;
  export_only.allow_nvrtc = false;
  export_only.cubin_cache_dir = scratch_->path() / "empty-cache";
  const AttentionBackward from_export(TunedCatalog::open_export(export_dir()), export_only);
  AttentionOptions database_options;
  database_options.cubin_cache_dir = cache_dir();
  const AttentionBackward from_database(TunedCatalog::open_database(database()), database_options);

  for (const DqRequirement dq : {DqRequirement::any, DqRequirement::deterministic}) {
    const bool deterministic = dq == DqRequirement::deterministic;
    SCOPED_TRACE(deterministic ? "deterministic dQ" : "any dQ");
    const AttentionBackwardProblem problem{shape};
    EXPECT_EQ(from_export.prepare(problem, dq).choice().kernel->config_key,
              deterministic ? kDeterministic : kAtomic);
    const Gradients exported = run(from_export, dq, q, k, v, d_o);
    const Gradients tuned = run(from_database, dq, q, k, v, d_o);
    EXPECT_EQ(exported.dk, tuned.dk);
    EXPECT_EQ(exported.dv, tuned.dv);
    if (deterministic) EXPECT_EQ(exported.dq, tuned.dq);
    for (const Gradients* gradients : {&exported, &tuned}) {
      const std::pair<const char*,
                      std::pair<const std::vector<std::uint16_t>*, const std::vector<double>*>>
          checks[] = {{"dQ", {&gradients->dq, &reference.dq}},
                      {"dK", {&gradients->dk, &reference.dk}},
                      {"dV", {&gradients->dv, &reference.dv}}};
      for (const auto& [name, pair] : checks) {
        const OutputComparison result = compare_with_reference(shape, *pair.first, *pair.second);
        EXPECT_TRUE(result.passes(tolerance))
            << (gradients == &exported ? "export " : "database ") << name << ": relative error "
            << result.relative_error << " (tolerance " << tolerance << "), non-finite "
            << result.non_finite;
      }
    }
  }
}

}  // namespace
}  // namespace swr::test
