// NVRTC, loaded at run time (dlopen), turning a KernelSource into a cubin for one arch.
#pragma once

#include <string>
#include <vector>

#include "generator/kernel_source.hpp"

namespace swr {

struct CompiledKernel {
  std::string arch;  // "sm_90a"
  std::string entry;
  std::vector<char> cubin;  // empty when compilation failed
  std::string log;          // NVRTC + ptxas log (always kept: holds the -v resource report)
  bool ok = false;
  int registers = -1;   // from ptxas -v, -1 when unknown
  int spill_bytes = 0;  // spill stores + loads reported by ptxas
  int static_shared_bytes = 0;
  double compile_seconds = 0;
  bool from_cache = false;
  std::string cache_key;  // hash of (source, headers, options, NVRTC version, arch)
};

// What ptxas -v reported for one entry function.
struct PtxasResources {
  int registers = -1;  // -1 when the log has no report
  int spill_bytes = 0;
  int static_shared_bytes = 0;
};

// Reads the "Compiling entry function '<entry>'" section of a log (the whole log when absent).
PtxasResources parse_ptxas_resources(const std::string& log, const std::string& entry);

// Why ptxas serialized the wgmma instructions of a log's module (C7510..C7515 "wgmma.mma_async
// instructions are serialized due to ..."), as "C7512: insufficient register resources for the
// function 'k'"; empty when it did not. Such a kernel is correct but waits for every wgmma before
// issuing the next, the tensor cores idle in between.
std::string ptxas_wgmma_serialization(const std::string& log);

class NvrtcCompiler {
 public:
  // Throws std::runtime_error with a clear message when libnvrtc cannot be loaded.
  NvrtcCompiler();
  ~NvrtcCompiler();
  NvrtcCompiler(const NvrtcCompiler&) = delete;
  NvrtcCompiler& operator=(const NvrtcCompiler&) = delete;

  // "13.0"
  std::string version() const;
  std::vector<std::string> options_for(const std::string& arch) const;
  // Thread-safe: NVRTC programs are independent.
  CompiledKernel compile(const KernelSource& source, const std::string& arch) const;

 private:
  struct Library;
  Library* library_;
};

}  // namespace swr
