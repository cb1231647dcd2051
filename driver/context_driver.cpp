#include "driver/context_driver.hpp"

#include <dlfcn.h>

#include <string>
#include <variant>

#include "driver/cuda_driver.hpp"

namespace swr {
namespace {

constexpr int kAbiVersion = 13000;  // as CudaDriver: the PFN typedefs above are its forms

template <class Pointer>
std::string fetch(PFN_cuGetProcAddress_v12000 get_proc_address, const char* name,
                  Pointer& pointer) {
  void* address = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult result =
      get_proc_address(name, &address, kAbiVersion, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (result != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || address == nullptr) {
    return std::string("the driver has no entry point ") + name + " for CUDA 13.0";
  }
  pointer = reinterpret_cast<Pointer>(address);
  return {};
}

std::variant<ContextDriver, std::string> load() {
  CudaDriver::get();  // loads and initializes libcuda, or throws NoDeviceError
  // Already loaded by CudaDriver: RTLD_NOLOAD hands back the same library, never another one.
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (library == nullptr) return std::string("libcuda.so.1 is not loaded");
  const auto get_proc_address =
      reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(library, "cuGetProcAddress_v2"));
  if (get_proc_address == nullptr) return std::string("libcuda.so.1 has no cuGetProcAddress_v2");
  ContextDriver driver;
  if (std::string error = fetch(get_proc_address, "cuCtxGetDevice", driver.cuCtxGetDevice);
      !error.empty()) {
    return error;
  }
  if (std::string error = fetch(get_proc_address, "cuCtxGetId", driver.cuCtxGetId);
      !error.empty()) {
    return error;
  }
  return driver;
}

}  // namespace

const ContextDriver& ContextDriver::get() {
  static const std::variant<ContextDriver, std::string> loaded = load();
  if (const auto* error = std::get_if<std::string>(&loaded)) throw NoDeviceError(*error);
  return std::get<ContextDriver>(loaded);
}

}  // namespace swr
