#include "tuner/cublas_baseline.hpp"

#include <cublas_api.h>
#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace swr {

// The entry points, resolved with dlsym and typed from cublas_api.h (never linked).
struct CublasBaseline::Library {
  void* handle = nullptr;
  std::string path;
  cublasHandle_t cublas = nullptr;
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasGetVersion_v2) get_version = nullptr;
  decltype(&::cublasSetStream_v2) set_stream = nullptr;
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                            int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                            cublasGemmAlgo_t) = nullptr;

  ~Library() {
    if (cublas != nullptr && destroy != nullptr) destroy(cublas);
    if (handle != nullptr) dlclose(handle);
  }
};

namespace {

template <class Function>
bool resolve(void* handle, const char* name, Function& function, std::string& why) {
  function = reinterpret_cast<Function>(dlsym(handle, name));
  if (function == nullptr) why = std::string("cuBLAS has no ") + name;
  return function != nullptr;
}

}  // namespace

std::unique_ptr<CublasBaseline> CublasBaseline::load(std::string& why) {
  auto library = std::make_unique<Library>();
  for (const char* name : {"libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.13",
                           "libcublas.so.12", "/usr/local/cuda/lib64/libcublas.so.12"}) {
    library->handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library->handle != nullptr) {
      library->path = name;
      break;
    }
  }
  if (library->handle == nullptr) {
    why = "cuBLAS not found (libcublas.so.13 or .12)";
    return nullptr;
  }
  Library& lib = *library;
  if (!resolve(lib.handle, "cublasCreate_v2", lib.create, why) ||
      !resolve(lib.handle, "cublasDestroy_v2", lib.destroy, why) ||
      !resolve(lib.handle, "cublasGetVersion_v2", lib.get_version, why) ||
      !resolve(lib.handle, "cublasSetStream_v2", lib.set_stream, why) ||
      !resolve(lib.handle, "cublasGemmEx", lib.gemm_ex, why)) {
    return nullptr;
  }
  if (const cublasStatus_t status = lib.create(&lib.cublas); status != CUBLAS_STATUS_SUCCESS) {
    lib.cublas = nullptr;
    why = "cublasCreate failed (status " + std::to_string(static_cast<int>(status)) + ")";
    return nullptr;
  }
  std::unique_ptr<CublasBaseline> baseline(new CublasBaseline(std::move(library)));
  int version = 0;
  if (baseline->library_->get_version(baseline->library_->cublas, &version) ==
      CUBLAS_STATUS_SUCCESS) {
    // CUBLAS_VERSION = major * 10000 + minor * 100 + patch.
    baseline->version_ = std::to_string(version / 10000) + "." +
                         std::to_string(version / 100 % 100) + "." + std::to_string(version % 100);
  }
  baseline->version_ += " (" + baseline->library_->path + ")";
  return baseline;
}

CublasBaseline::CublasBaseline(std::unique_ptr<Library> library) : library_(std::move(library)) {}

CublasBaseline::~CublasBaseline() = default;

void CublasBaseline::multiply(const GemmProblem& problem, const GemmBuffers& buffers,
                              CUstream stream) const {
  const Library& lib = *library_;
  if (const cublasStatus_t status = lib.set_stream(lib.cublas, stream);
      status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error("cublasSetStream failed (status " +
                             std::to_string(static_cast<int>(status)) + ")");
  }
  const cudaDataType type = problem.dtype == DataType::bf16 ? CUDA_R_16BF : CUDA_R_16F;
  const float alpha = 1.f;
  const float beta = 0.f;
  // Column-major C^T [n x m] = B^T [n x k] · A^T [k x m]; every leading dimension is a row length.
  const cublasStatus_t status = lib.gemm_ex(
      lib.cublas, CUBLAS_OP_N, CUBLAS_OP_N, problem.n, problem.m, problem.k, &alpha,
      reinterpret_cast<const void*>(buffers.b), type, problem.n,
      reinterpret_cast<const void*>(buffers.a), type, problem.k, &beta,
      reinterpret_cast<void*>(buffers.c), type, problem.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error("cublasGemmEx failed for " + problem.key() + " (status " +
                             std::to_string(static_cast<int>(status)) + ")");
  }
}

}  // namespace swr
