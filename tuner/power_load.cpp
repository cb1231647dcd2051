#include "tuner/power_load.hpp"

#include <algorithm>
#include <cmath>

#include "tuner/counters/helper_kernel_module.hpp"

namespace swr {
namespace {

constexpr const char* kKernelName = "swr_power_load";

// Four independent chains of bf16 m16n8k16 products per warp (mma.sync, sm_80 on; FMAs before
// that), on operands that are not zero (a zero operand draws less power than real data). The sums
// are written only if they equal a value they never reach, so the work cannot be dropped.
constexpr const char* kPowerLoadSource = R"(
extern "C" __global__ void swr_power_load(unsigned long long iterations, float* sink) {
  const unsigned lane = threadIdx.x + 977u * blockIdx.x;
  float acc[4][4] = {};
#if __CUDA_ARCH__ >= 800
  unsigned a[4], b[2];
  for (int i = 0; i < 4; ++i) a[i] = 0x3d803d80u ^ ((lane * (2654435761u + i)) & 0x007f007fu);
  for (int i = 0; i < 2; ++i) b[i] = 0x3d803d80u ^ ((lane * (40503u + i)) & 0x007f007fu);
  for (unsigned long long it = 0; it < iterations; ++it) {
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
          "{%8,%9}, {%0,%1,%2,%3};"
          : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
  }
#else
  const float x = 1.0f + lane * 1e-7f;
  for (unsigned long long it = 0; it < iterations; ++it) {
#pragma unroll
    for (int c = 0; c < 4; ++c)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[c][i] = fmaf(acc[c][i], 0.999f, x);
  }
#endif
  float total = 0.f;
  for (int c = 0; c < 4; ++c)
    for (int i = 0; i < 4; ++i) total += acc[c][i];
  if (total == -1.2345f) *sink = total;
}
)";

constexpr unsigned kThreadsPerBlock = 256;
constexpr unsigned kBlocksPerSm = 2;  // 16 warps: every tensor core of the SM busy
// The calibration launch: long enough that a launch's few microseconds of overhead hardly count
// (by arithmetic about 0.7 ms at the H100's dense tensor peak, longer on anything slower).
constexpr unsigned long long kCalibrationIterations = 20000;

}  // namespace

unsigned long long power_load_iterations(double ms, double iteration_ms) {
  if (!(ms > 0)) return 1;
  if (!(iteration_ms > 0)) return kMaximumPowerLoadIterations;
  const double iterations = std::ceil(ms / iteration_ms);
  return static_cast<unsigned long long>(
      std::clamp(iterations, 1.0, static_cast<double>(kMaximumPowerLoadIterations)));
}

const char* power_load_kernel_source() {
  return kPowerLoadSource;
}

PowerLoad::PowerLoad(const DeviceContext& context, CUstream stream) : driver_(CudaDriver::get()) {
  int sm_count = 0;
  SWR_CU(driver_, cuDeviceGetAttribute(&sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                       context.device()));
  grid_ = static_cast<unsigned>(std::max(1, sm_count) * kBlocksPerSm);
  module_ = std::make_unique<HelperKernelModule>(driver_, context.device(), kKernelName,
                                                 kPowerLoadSource);
  kernel_ = module_->function(kKernelName);
  SWR_CU(driver_, cuMemAlloc(&sink_, sizeof(float)));
  CUevent start = nullptr, stop = nullptr;
  try {
    SWR_CU(driver_, cuEventCreate(&start, CU_EVENT_DEFAULT));
    SWR_CU(driver_, cuEventCreate(&stop, CU_EVENT_DEFAULT));
    launch_iterations(stream, kCalibrationIterations / 10);  // the first launch's setup
    SWR_CU(driver_, cuEventRecord(start, stream));
    launch_iterations(stream, kCalibrationIterations);
    SWR_CU(driver_, cuEventRecord(stop, stream));
    SWR_CU(driver_, cuEventSynchronize(stop));
    float elapsed_ms = 0;
    SWR_CU(driver_, cuEventElapsedTime(&elapsed_ms, start, stop));
    iteration_ms_ = elapsed_ms / static_cast<double>(kCalibrationIterations);
  } catch (...) {
    if (start) driver_.cuEventDestroy(start);
    if (stop) driver_.cuEventDestroy(stop);
    driver_.cuMemFree(sink_);
    throw;
  }
  driver_.cuEventDestroy(start);
  driver_.cuEventDestroy(stop);
}

PowerLoad::~PowerLoad() {
  driver_.cuMemFree(sink_);
}

void PowerLoad::launch(CUstream stream, double ms) const {
  launch_iterations(stream, power_load_iterations(ms, iteration_ms_));
}

void PowerLoad::launch_iterations(CUstream stream, unsigned long long iterations) const {
  float* sink = reinterpret_cast<float*>(sink_);
  module_->launch(kernel_, grid_, kThreadsPerBlock, stream, iterations, sink);
}

}  // namespace swr
