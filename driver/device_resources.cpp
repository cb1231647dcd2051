#include "driver/device_resources.hpp"

namespace swr {

LoadedCubin::LoadedCubin(const CudaDriver& driver, const std::vector<char>& cubin,
                         const char* entry, int threads, int dynamic_shared_bytes,
                         const std::string& label)
    : LoadedCubin(driver, cubin, std::vector<const char*>{entry}, threads, dynamic_shared_bytes,
                  label) {}

LoadedCubin::LoadedCubin(const CudaDriver& driver, const std::vector<char>& cubin,
                         const std::vector<const char*>& entries, int threads,
                         int dynamic_shared_bytes, const std::string& label)
    : driver_(driver) {
  SWR_CU(driver_, cuModuleLoadData(&module_, cubin.data()));
  try {
    // Every entry but the last may be missing: an older cubin carries an older launch ABI.
    for (entry_index_ = 0; entry_index_ + 1 < entries.size(); ++entry_index_) {
      if (driver_.cuModuleGetFunction(&function_, module_, entries[entry_index_]) == CUDA_SUCCESS) {
        break;
      }
    }
    if (entry_index_ + 1 == entries.size()) {
      SWR_CU(driver_, cuModuleGetFunction(&function_, module_, entries.back()));
    }
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

CUfunction LoadedCubin::other_function(const char* entry) const {
  CUfunction function = nullptr;
  SWR_CU(driver_, cuModuleGetFunction(&function, module_, entry));
  return function;
}

LoadedCubin::~LoadedCubin() {
  if (module_) driver_.cuModuleUnload(module_);
}

}  // namespace swr
