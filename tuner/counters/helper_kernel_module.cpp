#include "tuner/counters/helper_kernel_module.hpp"

#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "generator/nvrtc_compiler.hpp"

namespace swr {
namespace {

// Compiling takes about a second; every context of the process reuses the cubin.
const std::vector<char>& cubin_for(const std::string& name, const std::string& source,
                                   const std::string& arch) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, std::vector<char>> cubins;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = cubins.find({name, arch});
  if (found != cubins.end()) return found->second;

  KernelSource kernel_source;
  kernel_source.name = name + ".cu";
  kernel_source.entry = name;
  kernel_source.text = source;
  const NvrtcCompiler compiler;
  CompiledKernel compiled = compiler.compile(kernel_source, arch);
  if (!compiled.ok) {
    throw std::runtime_error("cannot compile the tuner's helper kernels '" + name + "' for " +
                             arch + ": " + compiled.log);
  }
  return cubins.emplace(std::make_pair(name, arch), std::move(compiled.cubin)).first->second;
}

}  // namespace

std::string device_arch(const CudaDriver& driver, CUdevice device) {
  int major = 0;
  int minor = 0;
  SWR_CU(driver,
         cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
  SWR_CU(driver,
         cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

HelperKernelModule::HelperKernelModule(const CudaDriver& driver, CUdevice device,
                                       const std::string& name, const std::string& source)
    : driver_(driver), arch_(device_arch(driver, device)) {
  const std::vector<char>& cubin = cubin_for(name, source, arch_);
  SWR_CU(driver_, cuModuleLoadData(&module_, cubin.data()));
}

HelperKernelModule::~HelperKernelModule() {
  if (module_ != nullptr) driver_.cuModuleUnload(module_);
}

CUfunction HelperKernelModule::function(const char* entry) const {
  CUfunction function = nullptr;
  SWR_CU(driver_, cuModuleGetFunction(&function, module_, entry));
  return function;
}

}  // namespace swr
