#include "generator/nvrtc_compiler.hpp"

#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

namespace swr {

// The NVRTC entry points, resolved with dlsym and typed from nvrtc.h (never linked).
struct NvrtcCompiler::Library {
  void* handle = nullptr;
  std::string path;
  std::string version;
  decltype(&::nvrtcVersion) version_query = nullptr;
  decltype(&::nvrtcGetErrorString) get_error_string = nullptr;
  decltype(&::nvrtcCreateProgram) create_program = nullptr;
  decltype(&::nvrtcCompileProgram) compile_program = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy_program = nullptr;
  decltype(&::nvrtcGetProgramLogSize) get_log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) get_log = nullptr;
  decltype(&::nvrtcGetCUBINSize) get_cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) get_cubin = nullptr;

  std::string error_text(nvrtcResult result) const {
    const char* text = get_error_string(result);
    return text != nullptr ? text : "NVRTC error " + std::to_string(static_cast<int>(result));
  }
};

namespace {

constexpr const char* kLibraryName = "libnvrtc.so.13";

// The loader's search path first (LD_LIBRARY_PATH, ldconfig), then where the toolkit installs it.
std::vector<std::string> library_candidates() {
  std::vector<std::string> candidates = {kLibraryName};
  if (const char* cuda_home = std::getenv("CUDA_HOME"); cuda_home != nullptr && *cuda_home) {
    candidates.push_back(std::string(cuda_home) + "/lib64/" + kLibraryName);
  }
  candidates.push_back(std::string("/usr/local/cuda/lib64/") + kLibraryName);
  candidates.push_back(std::string("/usr/local/cuda/targets/x86_64-linux/lib/") + kLibraryName);
  return candidates;
}

template <class Function>
void resolve(void* handle, const std::string& path, const char* name, Function& function) {
  function = reinterpret_cast<Function>(dlsym(handle, name));
  if (function == nullptr) {
    throw std::runtime_error("NVRTC library " + path + " has no " + name +
                             ": install the CUDA 13 toolkit");
  }
}

int first_number(const std::string& text, const std::regex& pattern) {
  std::smatch match;
  if (!std::regex_search(text, match, pattern)) return -1;
  return std::stoi(match[1].str());
}

// Frees the program on every path out of compile().
class ProgramGuard {
 public:
  ProgramGuard(decltype(&::nvrtcDestroyProgram) destroy, nvrtcProgram program)
      : destroy_(destroy), program_(program) {}
  ~ProgramGuard() { destroy_(&program_); }
  ProgramGuard(const ProgramGuard&) = delete;
  ProgramGuard& operator=(const ProgramGuard&) = delete;

 private:
  decltype(&::nvrtcDestroyProgram) destroy_;
  nvrtcProgram program_;
};

}  // namespace

PtxasResources parse_ptxas_resources(const std::string& log, const std::string& entry) {
  std::string section = log;
  const std::string marker = "Compiling entry function '" + entry + "'";
  if (const std::size_t start = log.find(marker); start != std::string::npos) {
    const std::size_t end = log.find("Compiling entry function", start + marker.size());
    section = log.substr(start, end == std::string::npos ? std::string::npos : end - start);
  }
  static const std::regex registers(R"(Used (\d+) registers)");
  static const std::regex shared(R"((\d+) bytes smem)");
  static const std::regex spill_stores(R"((\d+) bytes spill stores)");
  static const std::regex spill_loads(R"((\d+) bytes spill loads)");
  PtxasResources resources;
  resources.registers = first_number(section, registers);
  resources.static_shared_bytes = std::max(0, first_number(section, shared));
  resources.spill_bytes = std::max(0, first_number(section, spill_stores)) +
                          std::max(0, first_number(section, spill_loads));
  return resources;
}

std::string ptxas_wgmma_serialization(const std::string& log) {
  static const std::regex serialized(
      R"(\((C\d+)\)[^\n]*wgmma\.mma_async instructions are serialized due to ([^\n]*))");
  std::smatch match;
  if (!std::regex_search(log, match, serialized)) return {};
  return match[1].str() + ": " + match[2].str();
}

NvrtcCompiler::NvrtcCompiler() : library_(new Library) {
  for (const std::string& candidate : library_candidates()) {
    library_->handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library_->handle != nullptr) {
      library_->path = candidate;
      break;
    }
  }
  if (library_->handle == nullptr) {
    delete library_;
    throw std::runtime_error(
        "NVRTC not found (libnvrtc.so.13): install the CUDA 13 toolkit or set LD_LIBRARY_PATH");
  }
  try {
    Library& lib = *library_;
    resolve(lib.handle, lib.path, "nvrtcVersion", lib.version_query);
    resolve(lib.handle, lib.path, "nvrtcGetErrorString", lib.get_error_string);
    resolve(lib.handle, lib.path, "nvrtcCreateProgram", lib.create_program);
    resolve(lib.handle, lib.path, "nvrtcCompileProgram", lib.compile_program);
    resolve(lib.handle, lib.path, "nvrtcDestroyProgram", lib.destroy_program);
    resolve(lib.handle, lib.path, "nvrtcGetProgramLogSize", lib.get_log_size);
    resolve(lib.handle, lib.path, "nvrtcGetProgramLog", lib.get_log);
    resolve(lib.handle, lib.path, "nvrtcGetCUBINSize", lib.get_cubin_size);
    resolve(lib.handle, lib.path, "nvrtcGetCUBIN", lib.get_cubin);
    int major = 0;
    int minor = 0;
    if (lib.version_query(&major, &minor) != NVRTC_SUCCESS) {
      throw std::runtime_error("nvrtcVersion failed in " + lib.path);
    }
    lib.version = std::to_string(major) + "." + std::to_string(minor);
  } catch (...) {
    dlclose(library_->handle);
    delete library_;
    throw;
  }
}

NvrtcCompiler::~NvrtcCompiler() {
  dlclose(library_->handle);
  delete library_;
}

std::string NvrtcCompiler::version() const {
  return library_->version;
}

std::vector<std::string> NvrtcCompiler::options_for(const std::string& arch) const {
  // -v makes ptxas write its register/spill/shared-memory report into the program log.
  return {"-arch=" + arch, "-std=c++17", "--use_fast_math", "-default-device",
          "--ptxas-options=-v"};
}

CompiledKernel NvrtcCompiler::compile(const KernelSource& source, const std::string& arch) const {
  const auto start = std::chrono::steady_clock::now();
  const Library& lib = *library_;
  CompiledKernel kernel;
  kernel.arch = arch;
  kernel.entry = source.entry;

  std::vector<const char*> header_texts;
  std::vector<const char*> header_names;
  for (const HeaderFile& header : source.headers) {
    header_texts.push_back(header.text.c_str());
    header_names.push_back(header.include_name.c_str());
  }
  nvrtcProgram program = nullptr;
  const nvrtcResult created = lib.create_program(&program, source.text.c_str(), source.name.c_str(),
                                                 static_cast<int>(header_texts.size()),
                                                 header_texts.data(), header_names.data());
  if (created != NVRTC_SUCCESS) {
    kernel.log = "nvrtcCreateProgram failed: " + lib.error_text(created);
    return kernel;
  }
  ProgramGuard guard(lib.destroy_program, program);

  const std::vector<std::string> options = options_for(arch);
  std::vector<const char*> option_pointers;
  for (const std::string& option : options) option_pointers.push_back(option.c_str());
  const nvrtcResult compiled = lib.compile_program(
      program, static_cast<int>(option_pointers.size()), option_pointers.data());

  std::size_t log_size = 0;
  if (lib.get_log_size(program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    std::string log(log_size, '\0');
    if (lib.get_log(program, log.data()) == NVRTC_SUCCESS) {
      log.resize(log_size - 1);  // drop the terminating NUL
      kernel.log = std::move(log);
    }
  }
  if (compiled != NVRTC_SUCCESS) {
    const std::string summary = "nvrtcCompileProgram (" + arch + "): " + lib.error_text(compiled);
    kernel.log = kernel.log.empty() ? summary : summary + "\n" + kernel.log;
  } else {
    std::size_t cubin_size = 0;
    if (lib.get_cubin_size(program, &cubin_size) == NVRTC_SUCCESS && cubin_size > 0) {
      kernel.cubin.resize(cubin_size);
      if (lib.get_cubin(program, kernel.cubin.data()) != NVRTC_SUCCESS) kernel.cubin.clear();
    }
    kernel.ok = !kernel.cubin.empty();
    if (!kernel.ok) kernel.log += "\nNVRTC produced no cubin for " + arch;
    // ptxas C7508: setmaxnreg was dropped, so the warp-specialized roles would run with the entry
    // register count the kernel was not written for. The cubin exists but is a failed build.
    if (kernel.ok && kernel.log.find("C7508") != std::string::npos) {
      kernel.ok = false;
      kernel.cubin.clear();
      kernel.log =
          "ptxas ignored setmaxnreg (C7508): a build failure of this variant\n" + kernel.log;
    }
  }

  const PtxasResources resources = parse_ptxas_resources(kernel.log, source.entry);
  kernel.registers = resources.registers;
  kernel.spill_bytes = resources.spill_bytes;
  kernel.static_shared_bytes = resources.static_shared_bytes;
  kernel.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return kernel;
}

}  // namespace swr
