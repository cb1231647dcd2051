// Standalone harness for the sm_90a warp-specialized GEMM (templates/gemm/sm90/). Not part of the
// repo's CMake build.
//
// Build (no GPU needed; NVRTC is linked, libcuda and libcublas are dlopen'ed at run time):
//   g++ -O2 -std=c++17 bench/hopper_gemm_harness.cpp -I/usr/local/cuda/include \
//       -L/usr/local/cuda/lib64 -lnvrtc -ldl -o hopper_gemm_harness
// Modes:
//   ./hopper_gemm_harness compile <templates dir> <cubin dir>
//        NVRTC-compiles every variant (-arch=sm_90a --ptxas-options=-v), prints registers and
//        spills, fails on a spill, on C7508 (setmaxnreg ignored) or on serialized wgmma; writes
//        <cubin dir>/<variant>.cubin, <variant>.cu (the rendered source) and util.cubin.
//   ./hopper_gemm_harness check <cubin dir> <variant>     correctness of one variant (odd shapes,
//        several rasters) against an fp32 GPU reference; run each variant in its own process
//        (a hang then costs one variant: `timeout 60 ./hopper_gemm_harness check ...`).
//   ./hopper_gemm_harness bench <cubin dir> [variant ...]  timing vs cuBLAS (ABBA, L2 flush,
//        CUDA events, medians), swizzle sweep, summary table.
//   ./hopper_gemm_harness once <cubin dir> <variant> m n k   one launch (for compute-sanitizer)
//   ./hopper_gemm_harness list                            the variant names
// bench environment: REPS (ABBA launches of each side, default 20), SWEEP_REPS (launches per
// variant x raster in the sweep, default 5), SHAPES="m,n,k;m,n,k", ONLY_F16=1, CLUSTER_GRID=<ctas>.
// The GPU modes need libcuda.so.1 and libcublas.so.13 (nothing from NVRTC at run time beyond the
// shared library the binary links). Typical flow in this workplace: build and compile here, copy
// the binary and the cubin folder to <main checkout>/.device/hopper-gemm/ (git-ignored), run
// bench/results/hopper-gemm-h200/run5.sh there (see that folder's README.md).
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

// ---------------------------------------------------------------------------------------------
// Variants: the knobs of templates/gemm/sm90/gemm_traits_sm90.cuh.
struct Variant {
  bool pingpong;
  int bm, bn, stages;
  bool dynamic;
  bool bf16;
  int cluster_m = 1;    // CTAs per cluster along M (B multicast)
  bool direct = false;  // EpilogueKind::direct instead of the TMA store
  std::string name() const {
    char text[128];
    snprintf(text, sizeof text, "%s_%dx%dx64_s%d_%s%s_%s", pingpong ? "pingpong" : "coop", bm, bn,
             stages, dynamic ? "dynamic" : "static",
             cluster_m > 1 ? "_c2x1" : (direct ? "_direct" : ""), bf16 ? "bf16" : "f16");
    return text;
  }
  // Host replica of Traits::kDynamicSharedBytes (the rendered source static_asserts equality).
  int wg_rows() const { return pingpong ? bm : bm / 2; }
  int shared_bytes() const {
    const int stage = (bm * 64 + 64 * bn) * 2;
    const int c = 2 * wg_rows() * bn * 2;
    return 1024 + stages * stage + c + 8 * (2 * stages + 4) + 8;
  }
};

static std::vector<Variant> all_variants() {
  struct Shape {
    bool pingpong;
    int bm, bn, stages;
  };
  const Shape shapes[] = {{false, 128, 256, 3}, {false, 128, 128, 4}, {false, 128, 128, 5},
                          {false, 256, 128, 3}, {false, 128, 192, 4}, {true, 128, 128, 4},
                          {true, 128, 128, 5},  {true, 64, 256, 4}};
  // Clusters of 2 CTAs along M (static persistence only).
  const Shape clustered[] = {
      {false, 128, 256, 3}, {false, 256, 128, 3}, {true, 128, 128, 4}, {false, 128, 192, 4}};
  std::vector<Variant> out;
  for (int bf16 = 0; bf16 < 2; ++bf16) {
    for (int dynamic = 0; dynamic < 2; ++dynamic)
      for (const Shape& s : shapes)
        out.push_back({s.pingpong, s.bm, s.bn, s.stages, dynamic != 0, bf16 != 0, 1});
    for (const Shape& s : clustered)
      out.push_back({s.pingpong, s.bm, s.bn, s.stages, false, bf16 != 0, 2});
    // Direct-store epilogue.
    for (const Shape& s :
         {Shape{false, 128, 256, 3}, Shape{false, 128, 192, 4}, Shape{false, 256, 128, 3}})
      out.push_back({s.pingpong, s.bm, s.bn, s.stages, false, bf16 != 0, 1, true});
    out.push_back({false, 128, 256, 3, true, bf16 != 0, 1, true});
  }
  return out;
}

static std::string render_source(const Variant& v) {
  std::ostringstream s;
  s << "// swr sm90 gemm, kernel " << v.name() << " (the swizzle is a launch argument)\n"
    << "#include \"gemm/sm90/gemm_kernel_ws.cuh\"\n"
    << "using Traits = swr::gemm::sm90::Traits<\n"
    << "    /*block_m*/ " << v.bm << ", /*block_n*/ " << v.bn << ", /*block_k*/ 64, /*stages*/ "
    << v.stages << ",\n    " << (v.bf16 ? "swr::Element::bf16" : "swr::Element::f16") << ",\n"
    << "    swr::gemm::sm90::ConsumerMode::" << (v.pingpong ? "pingpong" : "cooperative") << ",\n"
    << "    swr::gemm::sm90::Persistence::"
    << (v.dynamic ? "dynamic_persistent" : "static_persistent") << ", /*cluster_m*/ " << v.cluster_m
    << ", /*cluster_n*/ 1,\n    swr::gemm::sm90::EpilogueKind::"
    << (v.direct ? "direct" : "tma_store") << ">;\n"
    << "static_assert(Traits::kDynamicSharedBytes == " << v.shared_bytes()
    << ", \"host shared-memory formula\");\n"
    << "extern \"C\" __global__ void __launch_bounds__(Traits::kThreads, 1)"
    << (v.cluster_m > 1 ? " __cluster_dims__(Traits::kClusterM, 1, 1)" : "") << " swr_gemm_sm90(\n"
    << "    const __grid_constant__ swr::sm90::TmaDescriptor map_a,\n"
    << "    const __grid_constant__ swr::sm90::TmaDescriptor map_b,\n"
    << "    const __grid_constant__ swr::sm90::TmaDescriptor map_c, void* c, int m, int n, int k,\n"
    << "    int swizzle_axis, int swizzle_group, int* tile_counter) {\n"
    << "  swr::gemm::sm90::gemm_ws<Traits>(map_a, map_b, map_c, c, m, n, k, swizzle_axis,\n"
    << "                                   swizzle_group, tile_counter);\n"
    << "}\n";
  return s.str();
}

// Utility kernels: random fill, fp32 reference GEMM, comparisons. Raw PTX conversions, no headers.
static const char* kUtilSource = R"(
__device__ __forceinline__ float to_f32(unsigned short h, int bf16) {
  if (bf16) return __uint_as_float(((unsigned)h) << 16);
  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f;
}
__device__ __forceinline__ unsigned short from_f32(float f, int bf16) {
  unsigned short h;
  if (bf16) asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  else asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
extern "C" __global__ void fill_random(unsigned short* p, unsigned long long n, unsigned seed, int bf16) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)i * 2654435761u ^ seed ^ (unsigned)(i >> 32) * 40503u;
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
    p[i] = from_f32((float)(x & 0xffffff) / 8388608.0f - 1.0f, bf16);
  }
}
// ref[i][j] = sum_k A[i][k] * B[k][j], fp32; 16x16 threads, 16x16 tiles through shared memory.
extern "C" __global__ void reference_gemm(const unsigned short* a, const unsigned short* b, float* c,
                                          int m, int n, int k, int bf16) {
  __shared__ float sa[16][17], sb[16][17];
  const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < k; k0 += 16) {
    const int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    sa[threadIdx.y][threadIdx.x] = (row < m && ka < k) ? to_f32(a[(long long)row * k + ka], bf16) : 0.f;
    sb[threadIdx.y][threadIdx.x] = (kb < k && col < n) ? to_f32(b[(long long)kb * n + col], bf16) : 0.f;
    __syncthreads();
    for (int q = 0; q < 16; ++q) acc += sa[threadIdx.y][q] * sb[q][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) c[(long long)row * n + col] = acc;
}
// stats[0] += mismatches, stats[1] = max |err| (float bits, atomicMax on non-negative floats).
extern "C" __global__ void compare_f32(const unsigned short* c, const float* ref, unsigned long long n,
                                       float tol_abs, int bf16, unsigned* stats) {
  unsigned bad = 0; float worst = 0.f;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    const float r = ref[i], x = to_f32(c[i], bf16), e = fabsf(x - r);
    if (!(e <= 0.01f * fabsf(r) + tol_abs)) ++bad;
    if (e > worst || e != e) worst = e != e ? 3.0e38f : e;
  }
  if (bad) atomicAdd(&stats[0], bad);
  atomicMax(&stats[1], __float_as_uint(worst));
}
extern "C" __global__ void compare_16(const unsigned short* c, const unsigned short* ref,
                                      unsigned long long n, float tol_abs, int bf16, unsigned* stats) {
  unsigned bad = 0; float worst = 0.f;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    const float r = to_f32(ref[i], bf16), x = to_f32(c[i], bf16), e = fabsf(x - r);
    if (!(e <= 0.01f * fabsf(r) + tol_abs)) ++bad;
    if (e > worst || e != e) worst = e != e ? 3.0e38f : e;
  }
  if (bad) atomicAdd(&stats[0], bad);
  atomicMax(&stats[1], __float_as_uint(worst));
}
)";

// ---------------------------------------------------------------------------------------------
// compile mode
static bool read_file(const std::string& path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::stringstream s;
  s << f.rdbuf();
  out = s.str();
  return true;
}

static bool nvrtc_compile(const std::string& name, const std::string& source,
                          const std::string& include, const std::string& cubin_path,
                          std::string& log, double& seconds) {
  const auto start = std::chrono::steady_clock::now();
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr) !=
      NVRTC_SUCCESS)
    return false;
  const std::string inc = "-I" + include;
  const char* opts[] = {"-arch=sm_90a", "-std=c++17", "-default-device", "--ptxas-options=-v",
                        inc.c_str()};
  const nvrtcResult rr = nvrtcCompileProgram(prog, 5, opts);
  size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  log.assign(n, '\0');
  nvrtcGetProgramLog(prog, &log[0]);
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (rr != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    return false;
  }
  size_t size = 0;
  nvrtcGetCUBINSize(prog, &size);
  std::vector<char> cubin(size);
  nvrtcGetCUBIN(prog, cubin.data());
  nvrtcDestroyProgram(&prog);
  std::ofstream(cubin_path, std::ios::binary).write(cubin.data(), size);
  return true;
}

static int find_int_before(const std::string& log, const std::string& key) {
  const size_t at = log.find(key);
  if (at == std::string::npos) return -1;
  size_t b = at;
  while (b > 0 && log[b - 1] == ' ') --b;
  size_t e = b;
  while (b > 0 && isdigit(static_cast<unsigned char>(log[b - 1]))) --b;
  return b == e ? -1 : atoi(log.substr(b, e - b).c_str());
}

static int compile_mode(const std::string& templates, const std::string& dir) {
  std::string log;
  double secs = 0;
  if (!nvrtc_compile("util", kUtilSource, templates, dir + "/util.cubin", log, secs)) {
    printf("util: NVRTC failed\n%s\n", log.c_str());
    return 1;
  }
  int failures = 0;
  printf("%-40s %5s %6s %6s %8s %6s  %s\n", "variant", "regs", "spillS", "spillL", "smem", "sec",
         "status");
  for (const Variant& v : all_variants()) {
    const std::string src = render_source(v);
    std::ofstream(dir + "/" + v.name() + ".cu") << src;
    const bool ok =
        nvrtc_compile(v.name(), src, templates, dir + "/" + v.name() + ".cubin", log, secs);
    const int regs = find_int_before(log, "registers");
    const int spill_st = find_int_before(log, "bytes spill stores");
    const int spill_ld = find_int_before(log, "bytes spill loads");
    std::string status = ok ? "ok" : "NVRTC FAILED";
    if (ok && (spill_st != 0 || spill_ld != 0)) status = "FAIL: spills";
    if (log.find("C7508") != std::string::npos) status = "FAIL: C7508 setmaxnreg ignored";
    if (log.find("serialized") != std::string::npos) status = "FAIL: wgmma serialized";
    if (status != "ok") ++failures;
    printf("%-40s %5d %6d %6d %8d %6.2f  %s\n", v.name().c_str(), regs, spill_st, spill_ld,
           v.shared_bytes(), secs, status.c_str());
    if (status != "ok") printf("---- log ----\n%s\n", log.c_str());
    fflush(stdout);
  }
  printf("%d failure(s)\n", failures);
  return failures ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// GPU side: driver entry points through cuGetProcAddress, typed by cudaTypedefs.h.
struct Driver {
  PFN_cuInit_v2000 cuInit;
  PFN_cuDeviceGet_v2000 cuDeviceGet;
  PFN_cuDeviceGetAttribute_v2000 cuDeviceGetAttribute;
  PFN_cuDevicePrimaryCtxRetain_v7000 cuDevicePrimaryCtxRetain;
  PFN_cuCtxSetCurrent_v4000 cuCtxSetCurrent;
  PFN_cuModuleLoadData_v2000 cuModuleLoadData;
  PFN_cuModuleGetFunction_v2000 cuModuleGetFunction;
  PFN_cuFuncSetAttribute_v9000 cuFuncSetAttribute;
  PFN_cuLaunchKernel_v4000 cuLaunchKernel;
  PFN_cuMemAlloc_v3020 cuMemAlloc;
  PFN_cuMemFree_v3020 cuMemFree;
  PFN_cuMemcpyHtoD_v3020 cuMemcpyHtoD;
  PFN_cuMemcpyDtoH_v3020 cuMemcpyDtoH;
  PFN_cuMemsetD8Async_v3020 cuMemsetD8Async;
  PFN_cuMemsetD16_v3020 cuMemsetD16;
  PFN_cuMemsetD32Async_v3020 cuMemsetD32Async;
  PFN_cuStreamQuery_v2000 cuStreamQuery;
  PFN_cuEventCreate_v2000 cuEventCreate;
  PFN_cuEventRecord_v2000 cuEventRecord;
  PFN_cuEventSynchronize_v2000 cuEventSynchronize;
  PFN_cuEventElapsedTime_v2000 cuEventElapsedTime;
  PFN_cuTensorMapEncodeTiled_v12000 cuTensorMapEncodeTiled;
  PFN_cuGetErrorString_v6000 cuGetErrorString;
  PFN_cuOccupancyMaxActiveClusters_v11070 cuOccupancyMaxActiveClusters;
};
static Driver drv;

#define CK(x)                                                                     \
  do {                                                                            \
    CUresult r_ = (x);                                                            \
    if (r_ != CUDA_SUCCESS) {                                                     \
      const char* s_ = "?";                                                       \
      if (drv.cuGetErrorString) drv.cuGetErrorString(r_, &s_);                    \
      printf("FATAL %s:%d %s -> %d (%s)\n", __FILE__, __LINE__, #x, (int)r_, s_); \
      fflush(stdout);                                                             \
      exit(3);                                                                    \
    }                                                                             \
  } while (0)

static bool load_driver() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) return false;
  auto gpa = (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress_v2");
  if (!gpa) return false;
  bool ok = true;
  auto get = [&](const char* name, void** fn, int version) {
    CUdriverProcAddressQueryResult st;
    if (gpa(name, fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &st) != CUDA_SUCCESS || !*fn) {
      printf("missing %s\n", name);
      ok = false;
    }
  };
#define GET(name, ver) get(#name, (void**)&drv.name, ver)
  GET(cuInit, 2000);
  GET(cuDeviceGet, 2000);
  GET(cuDeviceGetAttribute, 2000);
  GET(cuDevicePrimaryCtxRetain, 7000);
  GET(cuCtxSetCurrent, 4000);
  GET(cuModuleLoadData, 2000);
  GET(cuModuleGetFunction, 2000);
  GET(cuFuncSetAttribute, 9000);
  GET(cuLaunchKernel, 4000);
  GET(cuMemAlloc, 3020);
  GET(cuMemFree, 3020);
  GET(cuMemcpyHtoD, 3020);
  GET(cuMemcpyDtoH, 3020);
  GET(cuMemsetD8Async, 3020);
  GET(cuMemsetD16, 3020);
  GET(cuMemsetD32Async, 3020);
  GET(cuStreamQuery, 2000);
  GET(cuEventCreate, 2000);
  GET(cuEventRecord, 2000);
  GET(cuEventSynchronize, 2000);
  GET(cuEventElapsedTime, 2000);
  GET(cuTensorMapEncodeTiled, 12000);
  GET(cuGetErrorString, 6000);
  GET(cuOccupancyMaxActiveClusters, 11070);
#undef GET
  return ok;
}

// cuBLAS through dlopen, as tuner/cublas_baseline.cpp does (types from the headers, never linked).
typedef int cublasStatus_t_;
struct Cublas {
  void* handle = nullptr;
  void* cublas = nullptr;
  int (*create)(void**) = nullptr;
  int (*gemm_ex)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*,
                 int, int, const void*, void*, int, int, int, int) = nullptr;
  int (*get_version)(void*, int*) = nullptr;
  bool load() {
    for (const char* name : {"libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.13"}) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle) break;
    }
    if (!handle) return false;
    create = (decltype(create))dlsym(handle, "cublasCreate_v2");
    gemm_ex = (decltype(gemm_ex))dlsym(handle, "cublasGemmEx");
    get_version = (decltype(get_version))dlsym(handle, "cublasGetVersion_v2");
    return create && gemm_ex && create(&cublas) == 0;
  }
  // Row-major C = A·B as column-major C^T [n x m] = B^T [n x k] · A^T [k x m].
  void gemm(bool bf16, int m, int n, int k, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c) const {
    const float alpha = 1.f, beta = 0.f;
    const int type = bf16 ? 14 /*CUDA_R_16BF*/ : 2 /*CUDA_R_16F*/;
    const int st = gemm_ex(cublas, 0 /*N*/, 0 /*N*/, n, m, k, &alpha, (const void*)b, type, n,
                           (const void*)a, type, k, &beta, (void*)c, type, n,
                           68 /*CUBLAS_COMPUTE_32F*/, -1 /*CUBLAS_GEMM_DEFAULT*/);
    if (st != 0) {
      printf("cublasGemmEx failed %d\n", st);
      exit(3);
    }
  }
};

struct Gpu {
  CUdevice dev;
  CUcontext ctx;
  int sms = 0;
  CUmodule util;
  CUfunction fill, ref, cmp32, cmp16;
  CUdeviceptr stats;
  CUdeviceptr flush;
  size_t flush_bytes = 256ull << 20;
  CUdeviceptr counter;
};
static Gpu gpu;

static void init_gpu(const std::string& dir) {
  if (!load_driver()) {
    printf("no usable libcuda\n");
    exit(2);
  }
  CK(drv.cuInit(0));
  CK(drv.cuDeviceGet(&gpu.dev, 0));
  CK(drv.cuDevicePrimaryCtxRetain(&gpu.ctx, gpu.dev));
  CK(drv.cuCtxSetCurrent(gpu.ctx));
  CK(drv.cuDeviceGetAttribute(&gpu.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, gpu.dev));
  std::string image;
  if (!read_file(dir + "/util.cubin", image)) {
    printf("no %s/util.cubin\n", dir.c_str());
    exit(2);
  }
  CK(drv.cuModuleLoadData(&gpu.util, image.data()));
  CK(drv.cuModuleGetFunction(&gpu.fill, gpu.util, "fill_random"));
  CK(drv.cuModuleGetFunction(&gpu.ref, gpu.util, "reference_gemm"));
  CK(drv.cuModuleGetFunction(&gpu.cmp32, gpu.util, "compare_f32"));
  CK(drv.cuModuleGetFunction(&gpu.cmp16, gpu.util, "compare_16"));
  CK(drv.cuMemAlloc(&gpu.stats, 16));
  CK(drv.cuMemAlloc(&gpu.flush, gpu.flush_bytes));
  CK(drv.cuMemAlloc(&gpu.counter, 16));
}

// Wait for the stream with a time limit: a deadlocked kernel ends the process, not the session.
static void sync_or_die(const char* what, double limit_s = 30) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const CUresult r = drv.cuStreamQuery(nullptr);
    if (r == CUDA_SUCCESS) return;
    if (r != CUDA_ERROR_NOT_READY) CK(r);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit_s) {
      printf("HANG: %s did not finish in %.0f s\n", what, limit_s);
      fflush(stdout);
      _Exit(4);
    }
  }
}

static void launch_util(CUfunction f, unsigned gx, unsigned gy, unsigned bx, unsigned by,
                        void** params) {
  CK(drv.cuLaunchKernel(f, gx, gy, 1, bx, by, 1, 0, nullptr, params, nullptr));
}

static void fill(CUdeviceptr p, size_t n, unsigned seed, bool bf16) {
  unsigned long long count = n;
  int b = bf16;
  void* params[] = {&p, &count, &seed, &b};
  launch_util(gpu.fill, 1024, 1, 256, 1, params);
}

static void reference(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, int m, int n, int k, bool bf16) {
  int bb = bf16;
  void* params[] = {&a, &b, &c, &m, &n, &k, &bb};
  launch_util(gpu.ref, (n + 15) / 16, (m + 15) / 16, 16, 16, params);
}

// Returns mismatches; worst = max |err|.
static unsigned compare(bool against_f32, CUdeviceptr c, CUdeviceptr ref, size_t count, int k,
                        bool bf16, float& worst) {
  CK(drv.cuMemsetD32Async(gpu.stats, 0, 2, nullptr));
  unsigned long long n = count;
  float tol_abs = 0.01f * std::sqrt(static_cast<float>(k)) / 3.f;  // 1% of the typical |C|
  int b = bf16;
  void* params[] = {&c, &ref, &n, &tol_abs, &b, &gpu.stats};
  launch_util(against_f32 ? gpu.cmp32 : gpu.cmp16, 1024, 1, 256, 1, params);
  sync_or_die("compare");
  unsigned host[2];
  CK(drv.cuMemcpyDtoH(host, gpu.stats, 8));
  std::memcpy(&worst, &host[1], 4);
  return host[0];
}

// ---------------------------------------------------------------------------------------------
struct Kernel {
  Variant v;
  CUmodule module;
  CUfunction fn;
  int max_ctas;  // persistent grid: #SMs, or the co-resident clusters x cluster size
};

static bool find_variant(const std::string& name, Variant& out) {
  for (const Variant& v : all_variants())
    if (v.name() == name) {
      out = v;
      return true;
    }
  return false;
}

static Kernel load_kernel(const std::string& dir, const Variant& v) {
  Kernel k;
  k.v = v;
  std::string image;
  if (!read_file(dir + "/" + v.name() + ".cubin", image)) {
    printf("missing cubin for %s\n", v.name().c_str());
    exit(2);
  }
  CK(drv.cuModuleLoadData(&k.module, image.data()));
  CK(drv.cuModuleGetFunction(&k.fn, k.module, "swr_gemm_sm90"));
  CK(drv.cuFuncSetAttribute(k.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            v.shared_bytes()));
  k.max_ctas = gpu.sms;
  if (v.cluster_m > 1) {
    // Not every SM can hold a CTA of a cluster (clusters live inside one GPC): a persistent grid
    // larger than the co-resident clusters would run a second, nearly empty wave.
    CUlaunchConfig config = {};
    config.gridDimX = gpu.sms - gpu.sms % v.cluster_m;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = 384;
    config.blockDimY = config.blockDimZ = 1;
    config.sharedMemBytes = v.shared_bytes();
    int clusters = 0;
    CK(drv.cuOccupancyMaxActiveClusters(&clusters, k.fn, &config));
    k.max_ctas = clusters * v.cluster_m;
    if (const char* env = getenv("CLUSTER_GRID")) k.max_ctas = std::min(k.max_ctas, atoi(env));
    printf("%s: %d co-resident clusters of %d\n", v.name().c_str(), clusters, v.cluster_m);
  }
  return k;
}

// The three tensor maps a variant needs (see gemm_kernel_ws.cuh): 16-bit elements, 2-D, row-major
// operands, SWIZZLE_128B, L2 promotion 256B, OOB zero fill.
struct Maps {
  alignas(128) CUtensorMap a;
  alignas(128) CUtensorMap b;
  alignas(128) CUtensorMap c;
  CUdeviceptr c_pointer;
};

static void encode(CUtensorMap* map, CUdeviceptr p, bool bf16, uint64_t inner, uint64_t outer,
                   uint32_t box_inner, uint32_t box_outer) {
  cuuint64_t dims[2] = {inner, outer}, strides[1] = {inner * 2};
  cuuint32_t box[2] = {box_inner, box_outer}, es[2] = {1, 1};
  CK(drv.cuTensorMapEncodeTiled(
      map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void*)p,
      dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
}

static Maps make_maps(const Variant& v, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, int m, int n,
                      int k) {
  Maps maps;
  encode(&maps.a, a, v.bf16, k, m, 64, v.bm);
  encode(&maps.b, b, v.bf16, n, k, 64, 64);
  encode(&maps.c, c, v.bf16, n, m, 64, v.wg_rows());
  maps.c_pointer = c;
  return maps;
}

// CTAs that have work: cluster tiles x cluster size (a cluster's second CTA may idle at the edge).
static int tiles_of(const Variant& v, int m, int n) {
  const int tiles_m = (m + v.bm - 1) / v.bm;
  const int cluster_tiles_m = (tiles_m + v.cluster_m - 1) / v.cluster_m;
  return cluster_tiles_m * v.cluster_m * ((n + v.bn - 1) / v.bn);
}

static void launch(const Kernel& kern, Maps& maps, int m, int n, int k, int axis, int group) {
  // Persistent grid: one CTA per SM at most, a whole number of clusters.
  const int grid = std::max(kern.v.cluster_m, std::min(kern.max_ctas, tiles_of(kern.v, m, n)));
  if (kern.v.dynamic) CK(drv.cuMemsetD32Async(gpu.counter, 0, 1, nullptr));
  CUdeviceptr counter = gpu.counter;
  void* params[] = {&maps.a, &maps.b, &maps.c, &maps.c_pointer, &m,
                    &n,      &k,      &axis,   &group,          &counter};
  CK(drv.cuLaunchKernel(kern.fn, grid, 1, 1, 384, 1, 1, kern.v.shared_bytes(), nullptr, params,
                        nullptr));
}

// ---------------------------------------------------------------------------------------------
static int check_mode(const std::string& dir, const std::string& name) {
  Variant v;
  if (!find_variant(name, v)) {
    printf("unknown variant %s\n", name.c_str());
    return 2;
  }
  init_gpu(dir);
  Kernel kern = load_kernel(dir, v);
  struct Case {
    int m, n, k, axis, group;
  };
  const Case cases[] = {{1000, 1016, 264, 0, 0},  {4099, 2056, 1000, 0, 4},
                        {4099, 2040, 1000, 1, 3}, {77, 136, 40, 0, 0},
                        {128, 256, 64, 0, 0},     {2048, 2048, 2048, 1, 16},
                        {257, 4104, 8, 0, 2}};
  int failures = 0;
  for (const Case& c : cases) {
    const int m = c.m, n = c.n, k = c.k;
    if (n % 8 || k % 8) continue;  // TMA: row strides multiple of 16 bytes
    CUdeviceptr a, b, out, ref;
    CK(drv.cuMemAlloc(&a, (size_t)m * k * 2));
    CK(drv.cuMemAlloc(&b, (size_t)k * n * 2));
    CK(drv.cuMemAlloc(&out, (size_t)m * n * 2));
    CK(drv.cuMemAlloc(&ref, (size_t)m * n * 4));
    fill(a, (size_t)m * k, 1234u + m, v.bf16);
    fill(b, (size_t)k * n, 777u + n, v.bf16);
    reference(a, b, ref, m, n, k, v.bf16);
    CK(drv.cuMemsetD16(out, 0xFFFF, (size_t)m * n));  // poison: NaN in fp16 and bf16
    Maps maps = make_maps(v, a, b, out, m, n, k);
    launch(kern, maps, m, n, k, c.axis, c.group);
    sync_or_die(v.name().c_str(), 10);
    float worst = 0;
    unsigned bad = compare(true, out, ref, (size_t)m * n, k, v.bf16, worst);
    // Run twice more to catch a stale dynamic counter or a race that shows only sometimes.
    unsigned bad2 = 0;
    for (int rep = 0; rep < 2; ++rep) {
      CK(drv.cuMemsetD16(out, 0xFFFF, (size_t)m * n));
      launch(kern, maps, m, n, k, c.axis, c.group);
      sync_or_die(v.name().c_str(), 10);
      float w2 = 0;
      bad2 += compare(true, out, ref, (size_t)m * n, k, v.bf16, w2);
      worst = std::max(worst, w2);
    }
    const bool ok = bad == 0 && bad2 == 0;
    failures += !ok;
    printf("check %-40s %5dx%5dx%5d raster(%c,%2d) mismatches %u+%u max_abs_err %.4g  %s\n",
           v.name().c_str(), m, n, k, c.axis ? 'm' : 'n', c.group, bad, bad2, worst,
           ok ? "PASS" : "FAIL");
    fflush(stdout);
    CK(drv.cuMemFree(a));
    CK(drv.cuMemFree(b));
    CK(drv.cuMemFree(out));
    CK(drv.cuMemFree(ref));
  }
  return failures ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
static double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const size_t n = x.size();
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

struct Timer {
  CUevent start, stop;
  Timer() {
    CK(drv.cuEventCreate(&start, CU_EVENT_DEFAULT));
    CK(drv.cuEventCreate(&stop, CU_EVENT_DEFAULT));
  }
  // Flush L2 (write 256 MB), then time one call.
  template <class F>
  double time_ms(F&& f) {
    CK(drv.cuMemsetD8Async(gpu.flush, 0x5a, gpu.flush_bytes, nullptr));
    CK(drv.cuEventRecord(start, nullptr));
    f();
    CK(drv.cuEventRecord(stop, nullptr));
    sync_or_die("timed call");
    float ms = 0;
    CK(drv.cuEventElapsedTime(&ms, start, stop));
    return ms;
  }
};

static int bench_mode(const std::string& dir, const std::vector<std::string>& names, int reps,
                      int sweep_reps) {
  init_gpu(dir);
  Cublas cublas;
  if (!cublas.load()) {
    printf("cuBLAS not loadable\n");
    return 2;
  }
  int version = 0;
  if (cublas.get_version) cublas.get_version(cublas.cublas, &version);
  printf("cuBLAS %d, %d SMs\n", version, gpu.sms);
  std::vector<Variant> variants;
  for (const std::string& name : names) {
    Variant v;
    if (!find_variant(name, v)) {
      printf("unknown variant %s\n", name.c_str());
      return 2;
    }
    variants.push_back(v);
  }
  struct Size {
    int m, n, k;
  };
  std::vector<Size> sizes = {
      {4096, 4096, 4096}, {8192, 8192, 8192}, {16384, 16384, 16384}, {5000, 3000, 7000}};
  if (const char* env = getenv("SHAPES")) {  // "m,n,k;m,n,k"
    sizes.clear();
    const std::string list = env;
    for (size_t at = 0; at < list.size();) {
      size_t end = list.find(';', at);
      if (end == std::string::npos) end = list.size();
      Size z;
      if (sscanf(list.substr(at, end - at).c_str(), "%d,%d,%d", &z.m, &z.n, &z.k) == 3)
        sizes.push_back(z);
      at = end + 1;
    }
  }
  const bool only_f16 = getenv("ONLY_F16") != nullptr;
  struct Raster {
    int axis, group;
  };
  const Raster rasters[] = {{0, 0}, {0, 2}, {0, 4}, {0, 8}, {0, 16},
                            {1, 2}, {1, 4}, {1, 8}, {1, 16}};
  std::map<std::string, Kernel> kernels;
  for (const Variant& v : variants) kernels[v.name()] = load_kernel(dir, v);
  Timer timer;
  struct Row {
    std::string shape, dtype, best;
    double swr, cublas;
    unsigned bad;
  };
  std::vector<Row> table;
  for (int bf16 = 0; bf16 < (only_f16 ? 1 : 2); ++bf16) {
    for (const Size& s : sizes) {
      std::vector<const Variant*> mine;
      for (const Variant& v : variants)
        if (v.bf16 == (bf16 != 0)) mine.push_back(&v);
      if (mine.empty()) continue;
      const int m = s.m, n = s.n, k = s.k;
      const double flop = 2.0 * m * n * k;
      CUdeviceptr a, b, c, cref;
      CK(drv.cuMemAlloc(&a, (size_t)m * k * 2));
      CK(drv.cuMemAlloc(&b, (size_t)k * n * 2));
      CK(drv.cuMemAlloc(&c, (size_t)m * n * 2));
      CK(drv.cuMemAlloc(&cref, (size_t)m * n * 2));
      fill(a, (size_t)m * k, 99u + m, bf16);
      fill(b, (size_t)k * n, 55u + n, bf16);
      cublas.gemm(bf16, m, n, k, a, b, cref);  // warm-up and reference output
      sync_or_die("cublas");
      char shape[64];
      snprintf(shape, sizeof shape, "%dx%dx%d", m, n, k);
      // Sweep: every variant x raster, `sweep_reps` flushed launches each, median.
      double best_ms = 1e30;
      const Variant* best_v = nullptr;
      Raster best_r{0, 0};
      for (const Variant* v : mine) {
        Kernel& kern = kernels[v->name()];
        Maps maps = make_maps(*v, a, b, c, m, n, k);
        launch(kern, maps, m, n, k, 0, 0);  // warm-up
        sync_or_die(v->name().c_str());
        for (const Raster& r : rasters) {
          std::vector<double> t;
          for (int i = 0; i < sweep_reps; ++i)
            t.push_back(timer.time_ms([&] { launch(kern, maps, m, n, k, r.axis, r.group); }));
          const double med = median(t);
          printf("sweep %-6s %-16s %-40s raster(%c,%2d) %8.3f ms %7.1f TFLOP/s\n",
                 bf16 ? "bf16" : "f16", shape, v->name().c_str(), r.axis ? 'm' : 'n', r.group, med,
                 flop / med / 1e9);
          if (med < best_ms) {
            best_ms = med;
            best_v = v;
            best_r = r;
          }
        }
        fflush(stdout);
      }
      // Final: best (variant, raster) vs cuBLAS, ABBA, `reps` each.
      Kernel& kern = kernels[best_v->name()];
      Maps maps = make_maps(*best_v, a, b, c, m, n, k);
      std::vector<double> ts, tc;
      auto run_swr = [&] {
        ts.push_back(
            timer.time_ms([&] { launch(kern, maps, m, n, k, best_r.axis, best_r.group); }));
      };
      auto run_cublas = [&] {
        tc.push_back(timer.time_ms([&] { cublas.gemm(bf16, m, n, k, a, b, cref); }));
      };
      for (int i = 0; i < reps; i += 2) {
        run_swr();
        run_cublas();
        run_cublas();
        run_swr();
      }
      CK(drv.cuMemsetD16(c, 0xFFFF, (size_t)m * n));
      launch(kern, maps, m, n, k, best_r.axis, best_r.group);
      sync_or_die("final check");
      float worst = 0;
      const unsigned bad = compare(false, c, cref, (size_t)m * n, k, bf16, worst);
      const double ms = median(ts), mc = median(tc);
      char best[128];
      snprintf(best, sizeof best, "%s raster(%c,%d)", best_v->name().c_str(),
               best_r.axis ? 'm' : 'n', best_r.group);
      printf(
          "final %-6s %-16s swr %8.3f ms %7.1f TFLOP/s | cuBLAS %8.3f ms %7.1f TFLOP/s | ratio "
          "%.3f | %s | vs cuBLAS mismatches %u max_abs_err %.3g\n",
          bf16 ? "bf16" : "f16", shape, ms, flop / ms / 1e9, mc, flop / mc / 1e9, mc / ms, best,
          bad, worst);
      fflush(stdout);
      table.push_back({shape, bf16 ? "bf16" : "f16", best, flop / ms / 1e9, flop / mc / 1e9, bad});
      CK(drv.cuMemFree(a));
      CK(drv.cuMemFree(b));
      CK(drv.cuMemFree(c));
      CK(drv.cuMemFree(cref));
    }
  }
  printf(
      "\n| shape | dtype | swr TFLOP/s | cuBLAS TFLOP/s | swr/cuBLAS | best variant, raster | "
      "check vs cuBLAS |\n|---|---|---|---|---|---|---|\n");
  for (const Row& r : table)
    printf("| %s | %s | %.1f | %.1f | %.3f | %s | %s |\n", r.shape.c_str(), r.dtype.c_str(), r.swr,
           r.cublas, r.swr / r.cublas, r.best.c_str(), r.bad ? "MISMATCH" : "ok");
  return 0;
}

// One launch of one variant on a small odd shape (for compute-sanitizer).
static int once_mode(const std::string& dir, const std::string& name, int m, int n, int k) {
  Variant v;
  if (!find_variant(name, v)) return 2;
  init_gpu(dir);
  Kernel kern = load_kernel(dir, v);
  CUdeviceptr a, b, out, ref;
  CK(drv.cuMemAlloc(&a, (size_t)m * k * 2));
  CK(drv.cuMemAlloc(&b, (size_t)k * n * 2));
  CK(drv.cuMemAlloc(&out, (size_t)m * n * 2));
  CK(drv.cuMemAlloc(&ref, (size_t)m * n * 4));
  fill(a, (size_t)m * k, 1, v.bf16);
  fill(b, (size_t)k * n, 2, v.bf16);
  reference(a, b, ref, m, n, k, v.bf16);
  Maps maps = make_maps(v, a, b, out, m, n, k);
  launch(kern, maps, m, n, k, 0, 2);
  sync_or_die(name.c_str(), 300);
  float worst = 0;
  const unsigned bad = compare(true, out, ref, (size_t)m * n, k, v.bf16, worst);
  printf("once %s %dx%dx%d mismatches %u max_abs_err %.3g\n", name.c_str(), m, n, k, bad, worst);
  return bad ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc >= 4 && !strcmp(argv[1], "compile")) return compile_mode(argv[2], argv[3]);
  if (argc >= 4 && !strcmp(argv[1], "check")) return check_mode(argv[2], argv[3]);
  if (argc >= 4 && !strcmp(argv[1], "bench")) {
    std::vector<std::string> names(argv + 3, argv + argc);
    const int reps = getenv("REPS") ? atoi(getenv("REPS")) : 20;
    const int sweep = getenv("SWEEP_REPS") ? atoi(getenv("SWEEP_REPS")) : 5;
    return bench_mode(argv[2], names, reps, sweep);
  }
  if (argc >= 7 && !strcmp(argv[1], "once"))
    return once_mode(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]), atoi(argv[6]));
  if (argc >= 2 && !strcmp(argv[1], "list")) {
    for (const Variant& v : all_variants()) printf("%s\n", v.name().c_str());
    return 0;
  }
  printf(
      "usage: %s compile <templates> <cubins> | check <cubins> <variant> | bench <cubins> "
      "<variant>... | once <cubins> <variant> m n k | list\n",
      argv[0]);
  return 2;
}
