// Whether this machine has an NVIDIA GPU, judged without libcuda, and whether the CUDA driver
// can use it. A machine with the hardware and an unusable driver (too old, cuInit failing, an
// entry point missing) is a broken machine, not one without a GPU: the GPU tests fail there
// with the driver's reason instead of skipping.
#pragma once

#include <filesystem>
#include <string>

namespace swr {

// True when the NVIDIA kernel module lists a GPU (a <root>/proc/driver/nvidia/gpus/<bus id>
// entry) or a GPU's character device <root>/dev/nvidia<N> exists. `root` is "/" but for tests.
bool nvidia_hardware_present(const std::filesystem::path& root = "/");

// Why the CUDA driver cannot run kernels here (CudaDriver's load error, a failing
// cuDeviceGetCount, or no device counted), or empty when it can.
std::string driver_unusable_reason();

}  // namespace swr
