#include "driver/device_resources.hpp"

namespace swr {

LoadedCubin::LoadedCubin(const CudaDriver& driver, const std::vector<char>& cubin,
                         const char* entry, int threads, int dynamic_shared_bytes,
                         const std::string& label)
    : driver_(driver) {
  SWR_CU(driver_, cuModuleLoadData(&module_, cubin.data()));
  try {
    SWR_CU(driver_, cuModuleGetFunction(&function_, module_, entry));
    SWR_CU(driver_, cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       dynamic_shared_bytes));
    SWR_CU(driver_, cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm_, function_, threads,
                                                                dynamic_shared_bytes));
    SWR_CU(driver_, cuFuncGetAttribute(&registers_, CU_FUNC_ATTRIBUTE_NUM_REGS, function_));
    if (blocks_per_sm_ < 1) {
      throw DriverError("cuOccupancyMaxActiveBlocksPerMultiprocessor", CUDA_ERROR_INVALID_VALUE,
                        "no CTA of " + label + " fits on one SM");
    }
  } catch (...) {
    driver_.cuModuleUnload(module_);
    throw;
  }
}

LoadedCubin::~LoadedCubin() {
  if (module_) driver_.cuModuleUnload(module_);
}

}  // namespace swr
