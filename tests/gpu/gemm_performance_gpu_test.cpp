// GEMM speed against cuBLAS in one run, on square f16 problems (SWR_GEMM_BENCH_SIZES, default
// "4096,8192"): a few tile shapes with every paper stride along n and m, each timed from a flushed
// L2 (median of 15 runs after 3 warm-ups) and checked against the fp32 GPU reference (cuBLAS
// too). Prints one line per
// variant (TFLOP/s and the ratio to cuBLAS) and writes the table to $SWR_GEMM_BENCH_OUT when set.
// The best variant of each size then meets cuBLAS head to head, launched in turn (ABBA), so that
// clocks drifting over the long sweep favour neither. On an H100/H200 it expects the best
// variant at >= 4096 to reach 0.5x cuBLAS there (issue 6).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "generator/gemm_kernel_source.hpp"
#include "generator/gemm_space.hpp"
#include "generator/gemm_swizzle.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "generator/resource_model.hpp"
#include "runtime/gemm_launcher.hpp"
#include "tests/fixtures/problem_builders.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tuner/cublas_baseline.hpp"
#include "tuner/device_random_fill.hpp"
#include "tuner/gemm_reference.hpp"
#include "tuner/gemm_reference_kernel.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/l2_flush.hpp"

namespace swr {
namespace {

using fixtures::mma_sync_gemm_config;

constexpr int kWarmups = 3;
constexpr int kTimedRuns = 15;
constexpr int kHeadToHeadPairs = 40;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

std::vector<int> bench_sizes() {
  const char* text = std::getenv("SWR_GEMM_BENCH_SIZES");
  std::vector<int> sizes;
  std::stringstream stream(text != nullptr && *text ? text : "4096,8192");
  for (std::string item; std::getline(stream, item, ',');) sizes.push_back(std::stoi(item));
  return sizes;
}

std::vector<GemmConfig> bench_binaries() {
  using P = GemmPersistence;
  return {mma_sync_gemm_config(128, 256, 64, 2, 4, 3, P::grid),
          mma_sync_gemm_config(128, 256, 64, 2, 4, 3, P::static_loop),
          mma_sync_gemm_config(128, 256, 64, 2, 4, 4, P::grid),
          mma_sync_gemm_config(256, 128, 64, 4, 2, 3, P::grid),
          mma_sync_gemm_config(256, 128, 64, 4, 2, 4, P::grid),
          mma_sync_gemm_config(128, 128, 64, 2, 2, 3, P::grid),
          mma_sync_gemm_config(128, 256, 32, 2, 4, 4, P::grid)};
}

struct Timer {
  const CudaDriver& driver;
  const L2Flush& flush;
  CUevent start = nullptr, stop = nullptr;
  Timer(const CudaDriver& d, const L2Flush& f) : driver(d), flush(f) {
    SWR_CU(driver, cuEventCreate(&start, CU_EVENT_DEFAULT));
    SWR_CU(driver, cuEventCreate(&stop, CU_EVENT_DEFAULT));
  }
  ~Timer() {
    driver.cuEventDestroy(start);
    driver.cuEventDestroy(stop);
  }
  // Milliseconds of one `launch`, after an L2 flush.
  template <class Launch>
  double once_ms(Launch&& launch) {
    flush.launch(nullptr);
    SWR_CU(driver, cuEventRecord(start, nullptr));
    launch();
    SWR_CU(driver, cuEventRecord(stop, nullptr));
    SWR_CU(driver, cuEventSynchronize(stop));
    float ms = 0;
    SWR_CU(driver, cuEventElapsedTime(&ms, start, stop));
    return ms;
  }
  // Median milliseconds of `launch` after warm-ups, each run after an L2 flush.
  template <class Launch>
  double median_ms(Launch&& launch) {
    for (int i = 0; i < kWarmups; ++i) launch();
    std::vector<double> times;
    for (int i = 0; i < kTimedRuns; ++i) times.push_back(once_ms(launch));
    return median(times);
  }
};

// Several launches timed in turn, kHeadToHeadPairs rounds: round r starts with launch r % count
// and goes around (for two: ABBA), so that none always runs on the warmer card; each launch from a
// flushed L2. Returns each one's median in milliseconds.
std::vector<double> interleaved_medians_ms(Timer& timer,
                                           const std::vector<std::function<void()>>& launches) {
  const std::size_t count = launches.size();
  std::vector<std::vector<double>> runs_ms(count);
  for (int i = 0; i < kWarmups; ++i)
    for (const auto& launch : launches) launch();
  for (int round = 0; round < kHeadToHeadPairs; ++round)
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t which = (round + i) % count;
      runs_ms[which].push_back(timer.once_ms(launches[which]));
    }
  std::vector<double> medians;
  for (const std::vector<double>& runs : runs_ms) medians.push_back(median(runs));
  return medians;
}

void print_head_to_head(const GemmProblem& problem, const std::string& name, double cublas_ms,
                        double ours_ms) {
  std::printf(
      "%s head to head, %d launches each in turn: cuBLAS %.1f TFLOP/s, %s %.1f TFLOP/s "
      "(medians) = %.3fx cuBLAS\n",
      problem.key().c_str(), kHeadToHeadPairs, problem.flops() / cublas_ms / 1e9, name.c_str(),
      problem.flops() / ours_ms / 1e9, cublas_ms / ours_ms);
}

// Head to head: the two launched in turn (ABBA). Returns the ratio of the medians (> 1: faster
// than cuBLAS) and prints both.
double time_head_to_head(Timer& timer, const GemmProblem& problem, const std::string& name,
                         const std::function<void()>& run_cublas,
                         const std::function<void()>& run_ours) {
  const std::vector<double> ms = interleaved_medians_ms(timer, {run_cublas, run_ours});
  print_head_to_head(problem, name, ms[0], ms[1]);
  return ms[0] / ms[1];
}

TEST(GemmPerformanceOnGpu, TunedVariantsAgainstCublas) {
  SWR_REQUIRE_GPU();
  const CudaDriver& driver = CudaDriver::get();
  DeviceContext context;
  const auto gpu = detect_present_gpu();
  ASSERT_TRUE(gpu.has_value());
  std::string why;
  const auto cublas = CublasBaseline::load(why);
  if (!cublas) GTEST_SKIP() << why;
  L2Flush flush(context);
  GemmReferenceKernel reference(context);
  DeviceRandomFill fill(context);
  Timer timer(driver, flush);

  NvrtcCompiler compiler;
  std::vector<std::pair<GemmConfig, std::unique_ptr<GemmKernelModule>>> modules;
  for (const GemmConfig& config : bench_binaries()) {
    if (!gemm_resource_use(config, *gpu).does_not_fit.empty()) continue;
    const KernelSource source = render_gemm_kernel({64, 64, 64, DataType::f16}, config);
    const CompiledKernel kernel = compiler.compile(source, gpu->arch);
    ASSERT_TRUE(kernel.ok) << kernel.log;
    std::printf("compiled %-34s %3d registers, %d spill bytes\n", source.name.c_str(),
                kernel.registers, kernel.spill_bytes);
    modules.emplace_back(
        config, std::make_unique<GemmKernelModule>(driver, kernel.cubin, config,
                                                   source.dynamic_shared_bytes, gpu->sm_count));
  }

  std::ostringstream table;
  table << "# " << gpu->description << " (" << gpu->name << "), cuBLAS " << cublas->version()
        << ", f16, median of " << kTimedRuns << " runs from a flushed L2\n";
  table << "size,variant,median_ms,tflops,ratio_to_cublas,relative_error\n";
  for (int size : bench_sizes()) {
    const GemmProblem problem{size, size, size, DataType::f16};
    const std::size_t count = std::size_t(size) * size;
    CUdeviceptr a = 0, b = 0, c = 0, expected = 0;
    SWR_CU(driver, cuMemAlloc(&a, count * 2));
    SWR_CU(driver, cuMemAlloc(&b, count * 2));
    SWR_CU(driver, cuMemAlloc(&c, count * 2));
    SWR_CU(driver, cuMemAlloc(&expected, count * 4));
    fill.fill(a, count, DataType::f16, 1, nullptr);
    fill.fill(b, count, DataType::f16, 2, nullptr);
    reference.compute(problem, {a, b, c}, expected, nullptr);
    const double cublas_ms = timer.median_ms([&] {
      cublas->multiply(problem, {a, b, c}, nullptr);
    });
    const double cublas_tflops = problem.flops() / cublas_ms / 1e9;
    const OutputComparison cublas_check = reference.compare(problem, c, expected, nullptr);
    std::printf("%5d cuBLAS %38s %8.3f ms %7.1f TFLOP/s  err %.1e\n", size, "", cublas_ms,
                cublas_tflops, cublas_check.relative_error);
    EXPECT_TRUE(cublas_check.passes(relative_error_tolerance(DataType::f16)))
        << "cuBLAS against the fp32 reference: " << cublas_check.relative_error;
    table << size << ",cublas," << cublas_ms << "," << cublas_tflops << ",1,"
          << cublas_check.relative_error << "\n";

    double best_tflops = 0;
    std::string best;
    GemmConfig best_config;
    const GemmKernelModule* best_module = nullptr;
    for (const auto& [binary, module] : modules) {
      std::vector<std::pair<int, SwizzleAxis>> orders = {{0, SwizzleAxis::n}};
      for (SwizzleAxis axis : {SwizzleAxis::n, SwizzleAxis::m})
        for (int stride : kPaperSwizzleStrides)
          if (stride > 0) orders.emplace_back(stride, axis);
      for (const auto& [stride, axis] : orders) {
        const GemmConfig config = with_swizzle(binary, stride, axis);
        // Poisoned, so a variant that writes nothing cannot pass on its predecessor's output.
        SWR_CU(driver, cuMemsetD8Async(c, 0xff, count * 2, nullptr));
        const double ms = timer.median_ms([&] {
          module->launch(problem, {a, b, c}, nullptr, config);
        });
        const double tflops = problem.flops() / ms / 1e9;
        const OutputComparison check = reference.compare(problem, c, expected, nullptr);
        const bool ok = check.passes(relative_error_tolerance(DataType::f16));
        std::printf("%5d %-40s %8.3f ms %7.1f TFLOP/s %5.3fx cuBLAS  err %.1e %s\n", size,
                    config.key().c_str(), ms, tflops, tflops / cublas_tflops, check.relative_error,
                    ok ? "ok" : "WRONG");
        EXPECT_TRUE(ok) << config.key() << " at " << size << ": relative error "
                        << check.relative_error << ", non-finite " << check.non_finite;
        table << size << "," << config.key() << "," << ms << "," << tflops << ","
              << tflops / cublas_tflops << "," << check.relative_error << "\n";
        if (ok && tflops > best_tflops) {
          best_tflops = tflops;
          best = config.key();
          best_config = config;
          best_module = module.get();
        }
      }
    }
    ASSERT_FALSE(best.empty()) << "no correct variant at " << size;
    std::printf("%5d best %s: %.1f TFLOP/s = %.3fx cuBLAS (cuBLAS timed before the sweep)\n", size,
                best.c_str(), best_tflops, best_tflops / cublas_tflops);

    const double head_to_head = time_head_to_head(
        timer, problem, best,
        [&] {
          cublas->multiply(problem, {a, b, c}, nullptr);
        },
        [&] {
          best_module->launch(problem, {a, b, c}, nullptr, best_config);
        });
    table << size << ",head_to_head:" << best << ",,," << head_to_head << ",\n";
    if (size >= 4096 && (gpu->name == "h100" || gpu->name == "h200")) {
      EXPECT_GE(head_to_head, 0.5) << "best " << best << " at " << size;
    }
    for (CUdeviceptr pointer : {a, b, c, expected}) driver.cuMemFree(pointer);
  }
  if (const char* out = std::getenv("SWR_GEMM_BENCH_OUT"); out != nullptr && *out) {
    std::ofstream(out) << table.str();
  }
}

// A variant's kernel, compiled and loaded for one problem.
struct LoadedVariant {
  GemmConfig config;
  std::unique_ptr<GemmKernelModule> module;
};

LoadedVariant load_variant(const CudaDriver& driver, NvrtcCompiler& compiler, const GpuProfile& gpu,
                           const GemmProblem& problem, const std::string& key) {
  const std::optional<GemmConfig> config = GemmConfig::from_key(key);
  if (!config) throw std::invalid_argument("bad config key '" + key + "'");
  const KernelSource source = render_gemm_kernel(problem, *config);
  const CompiledKernel kernel = compiler.compile(source, gpu.arch);
  if (!kernel.ok) throw std::runtime_error(key + " does not compile:\n" + kernel.log);
  return {*config, std::make_unique<GemmKernelModule>(driver, kernel.cubin, *config,
                                                      source.dynamic_shared_bytes, gpu.sm_count)};
}

// The variants a tune chose (SWR_GEMM_HEAD_TO_HEAD="m,n,k,dtype,config_key;...", e.g. from
// `swr-tune query`) against cuBLAS, head to head, each checked against the fp32 reference first.
// An entry may name a second key ("m,n,k,dtype,key,baseline_key"): then cuBLAS, the variant and
// the baseline run in turn (three-way rounds), each against cuBLAS, and the variant against the
// baseline: one knob's effect, isolated in the same run. Skipped when unset: the variant is
// chosen by the tuner, not here.
TEST(GemmPerformanceOnGpu, ChosenVariantsHeadToHeadWithCublas) {
  SWR_REQUIRE_GPU();
  const char* text = std::getenv("SWR_GEMM_HEAD_TO_HEAD");
  if (text == nullptr || *text == 0) GTEST_SKIP() << "SWR_GEMM_HEAD_TO_HEAD is not set";
  const CudaDriver& driver = CudaDriver::get();
  DeviceContext context;
  const auto gpu = detect_present_gpu();
  ASSERT_TRUE(gpu.has_value());
  std::string why;
  const auto cublas = CublasBaseline::load(why);
  if (!cublas) GTEST_SKIP() << why;
  L2Flush flush(context);
  GemmReferenceKernel reference(context);
  DeviceRandomFill fill(context);
  Timer timer(driver, flush);
  NvrtcCompiler compiler;
  std::stringstream entries(text);
  for (std::string entry; std::getline(entries, entry, ';');) {
    std::stringstream fields(entry);
    std::vector<std::string> field;
    for (std::string item; std::getline(fields, item, ',');) field.push_back(item);
    ASSERT_TRUE(field.size() == 5 || field.size() == 6)
        << "'" << entry << "': want m,n,k,dtype,key[,baseline_key]";
    const GemmProblem problem{std::stoi(field[0]), std::stoi(field[1]), std::stoi(field[2]),
                              field[3] == "bf16" ? DataType::bf16 : DataType::f16};
    std::vector<std::string> keys(field.begin() + 4, field.end());
    std::vector<LoadedVariant> variants;
    try {
      for (const std::string& key : keys)
        variants.push_back(load_variant(driver, compiler, *gpu, problem, key));
    } catch (const std::exception& error) {
      ADD_FAILURE() << problem.key() << ": " << error.what();  // the other entries still run
      continue;
    }
    CUdeviceptr a = 0, b = 0, c = 0, expected = 0;
    SWR_CU(driver, cuMemAlloc(&a, std::size_t(problem.m) * problem.k * 2));
    SWR_CU(driver, cuMemAlloc(&b, std::size_t(problem.k) * problem.n * 2));
    SWR_CU(driver, cuMemAlloc(&c, std::size_t(problem.m) * problem.n * 2));
    SWR_CU(driver, cuMemAlloc(&expected, std::size_t(problem.m) * problem.n * 4));
    fill.fill(a, std::size_t(problem.m) * problem.k, problem.dtype, 1, nullptr);
    fill.fill(b, std::size_t(problem.k) * problem.n, problem.dtype, 2, nullptr);
    reference.compute(problem, {a, b, c}, expected, nullptr);
    std::vector<std::function<void()>> launches = {[&] {
      cublas->multiply(problem, {a, b, c}, nullptr);
    }};
    for (std::size_t i = 0; i < variants.size(); ++i) {
      const GemmKernelModule& module = *variants[i].module;
      SWR_CU(driver, cuMemsetD8Async(c, 0xff, std::size_t(problem.m) * problem.n * 2, nullptr));
      module.launch(problem, {a, b, c}, nullptr);
      const OutputComparison check = reference.compare(problem, c, expected, nullptr);
      EXPECT_TRUE(check.passes(relative_error_tolerance(problem.dtype)))
          << keys[i] << " on " << problem.key() << ": relative error " << check.relative_error;
      // The wave a persistent variant fills (clusters live inside one GPC: a 2x2 cluster may
      // leave SMs idle) and the raster it walks.
      std::printf("%s on %s: grid %d CTAs, %d co-resident, %lld raster tiles\n", keys[i].c_str(),
                  problem.key().c_str(), module.grid_size(problem), module.wave_size(),
                  gemm_raster_grid(problem, variants[i].config).tiles());
      launches.push_back([&module, &problem, a, b, c] {
        module.launch(problem, {a, b, c}, nullptr);
      });
    }
    const std::vector<double> ms = interleaved_medians_ms(timer, launches);
    for (std::size_t i = 0; i < keys.size(); ++i)
      print_head_to_head(problem, keys[i], ms[0], ms[i + 1]);
    if (keys.size() == 2) {
      std::printf(
          "%s %s over %s, in turn with cuBLAS: %.3fx speedup (medians %.4f ms vs %.4f ms)\n",
          problem.key().c_str(), keys[0].c_str(), keys[1].c_str(), ms[2] / ms[1], ms[1], ms[2]);
    }
    for (CUdeviceptr pointer : {a, b, c, expected}) driver.cuMemFree(pointer);
  }
}

}  // namespace
}  // namespace swr
