/* A libcuda.so.1 that loads but cannot be used: the stand-in for a broken driver on a machine
 * with a GPU. scripts/check-unusable-driver.sh puts it first on LD_LIBRARY_PATH and expects the
 * GPU tests to fail, not skip. $SWR_STUB_DRIVER_FAILURE picks how it breaks:
 *   cuInit (default)  cuInit returns CUDA_ERROR_UNKNOWN;
 *   entry-point       cuInit succeeds, but every entry point past cuInit is missing;
 *   version           cuInit succeeds and the driver reports CUDA 12.8. */
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

static const char* failure(void) {
  const char* chosen = getenv("SWR_STUB_DRIVER_FAILURE");
  return chosen != NULL && *chosen != '\0' ? chosen : "cuInit";
}

CUresult cuInit(unsigned int flags) {
  (void)flags;
  return strcmp(failure(), "cuInit") == 0 ? CUDA_ERROR_UNKNOWN : CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int* version) {
  *version = strcmp(failure(), "version") == 0 ? 12080 : 13000;
  return CUDA_SUCCESS;
}

CUresult cuGetProcAddress_v2(const char* symbol, void** address, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status) {
  (void)version;
  (void)flags;
  *address = NULL;
  if (strcmp(symbol, "cuInit") == 0) *address = (void*)&cuInit;
  if (strcmp(symbol, "cuDriverGetVersion") == 0) *address = (void*)&cuDriverGetVersion;
  if (status != NULL) {
    *status = *address != NULL ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  }
  return *address != NULL ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
