// What the GEMM runtime GPU tests (mma.sync and wgmma entries) share: variants tuned into a
// database with stand-in times and the builds NVRTC makes for this device, then exported; and every
// asked shape run through a swr::Gemm with its output poisoned first, against the fp32 reference.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <span>

#include "db/records.hpp"
#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "runtime/kernel_exporter.hpp"
#include "swr/device_buffer.hpp"
#include "swr/gemm.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/random_sixteen_bit.hpp"
#include "tests/runtime/runtime_fixtures.hpp"
#include "tuner/gemm_reference_kernel.hpp"

namespace swr::test {

struct TunedGemmVariant {
  GemmProblem problem;
  const char* config;
};

// Builds each variant into directory/cubins, records it in directory/results.db and exports that
// database to directory/export.
inline void tune_and_export(std::span<const TunedGemmVariant> variants, const GpuProfile& present,
                            const std::filesystem::path& directory) {
  const std::unique_ptr<CubinBuilder> builder = make_nvrtc_cubin_builder(directory / "cubins");
  db::GpuRecord gpu = db::GpuRecord::from_profile(present);
  gpu.driver_version = "test";
  gpu.cuda_version = "13.0";
  TunedDatabase tuned(directory / "results.db", gpu);
  for (const TunedGemmVariant& variant : variants) {
    const BuiltCubin built =
        builder->build(variant.problem, gemm_config_named(variant.config), present.arch);
    tuned.add(variant.problem, variant.config, 0.05, "", built.source_hash);
  }
  ExportOptions options;
  options.gpu = present.name;
  options.out_dir = directory / "export";
  export_kernels(tuned.database(), *builder, options);
}

// Every shape of `asked` through `gemm` on random inputs, the output poisoned (NaN) first, against
// the fp32 GPU reference; check_plan(plan) adds the caller's expectations of each launch plan.
template <class CheckPlan>
void expect_gemm_matches_reference(const Gemm& gemm, std::span<const GemmProblem> asked,
                                   unsigned seed, CheckPlan check_plan) {
  const CudaDriver& driver = CudaDriver::get();
  const DeviceContext context;
  const GemmReferenceKernel reference(context);
  CUstream stream = nullptr;
  SWR_CU(driver, cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  std::mt19937 rng(seed);
  for (const GemmProblem& problem : asked) {
    SCOPED_TRACE(problem.key());
    const GemmPlan plan = gemm.plan(problem);
    check_plan(problem, plan);
    const std::size_t a_count = std::size_t(problem.m) * problem.k;
    const std::size_t b_count = std::size_t(problem.k) * problem.n;
    const std::size_t c_count = std::size_t(problem.m) * problem.n;
    const auto a = gpu_test::random_elements(problem.dtype, a_count, rng);
    const auto b = gpu_test::random_elements(problem.dtype, b_count, rng);
    DeviceBuffer da(a_count * 2), db(b_count * 2), dc(c_count * 2), expected(c_count * 4);
    da.copy_from_host(a.data(), a_count * 2);
    db.copy_from_host(b.data(), b_count * 2);
    SWR_CU(driver, cuMemsetD8Async(dc.pointer(), 0xff, c_count * 2, stream));  // NaN
    gemm.run(problem, {da.pointer(), db.pointer(), dc.pointer()}, stream);
    reference.compute(problem, {da.pointer(), db.pointer(), 0}, expected.pointer(), stream);
    const OutputComparison result =
        reference.compare(problem, dc.pointer(), expected.pointer(), stream);
    EXPECT_TRUE(result.passes(relative_error_tolerance(problem.dtype)))
        << plan.choice.kernel->config_key << ": relative error " << result.relative_error << ", "
        << result.non_finite << " non-finite";
    std::printf("%s: %s from %s, grid %d\n", problem.key().c_str(),
                plan.choice.kernel->config_key.c_str(), plan.cubin_origin.c_str(), plan.grid);
  }
  driver.cuStreamDestroy(stream);
}

}  // namespace swr::test
