// Heavy tensor-core work of a set length, the same for every variant: what the tuner runs before
// and between a variant's timed runs, so that the variant is timed at a clock the GPU's power cap
// sets for a mix of work, as in a training step, rather than for the variant alone.
#pragma once

#include <memory>

#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"

namespace swr {

class HelperKernelModule;

class PowerLoad {
 public:
  // Loads the load's kernel (compiled once per process) into the current context and times one
  // launch of it on `stream`, to know how long an iteration takes.
  PowerLoad(const DeviceContext& context, CUstream stream);
  ~PowerLoad();
  PowerLoad(const PowerLoad&) = delete;
  PowerLoad& operator=(const PowerLoad&) = delete;

  // Enqueues about `ms` of the load on `stream` (as timed when it was made: longer where the clock
  // has come down since); returns at once.
  void launch(CUstream stream, double ms) const;

  double iteration_ms() const { return iteration_ms_; }

 private:
  void launch_iterations(CUstream stream, unsigned long long iterations) const;

  const CudaDriver& driver_;
  std::unique_ptr<HelperKernelModule> module_;
  CUfunction kernel_ = nullptr;
  CUdeviceptr sink_ = 0;
  unsigned grid_ = 0;
  double iteration_ms_ = 0;
};

// The iterations that fill `ms` at `iteration_ms` each: at least 1, at most
// kMaximumPowerLoadIterations, so that a misread calibration cannot hold the GPU for minutes (an
// iteration, four tensor-core products a warp, takes well under a microsecond).
inline constexpr unsigned long long kMaximumPowerLoadIterations = 1ull << 24;
unsigned long long power_load_iterations(double ms, double iteration_ms);

// The CUDA source of the load's kernel (tests compile it for several targets).
const char* power_load_kernel_source();

}  // namespace swr
