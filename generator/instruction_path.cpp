#include "swr/instruction_path.hpp"

namespace swr {

std::string_view to_string(InstructionPath path) {
  return path == InstructionPath::wgmma ? "wgmma" : "mma_sync";
}

std::optional<InstructionPath> parse_instruction_path(std::string_view text) {
  if (text == "mma_sync") return InstructionPath::mma_sync;
  if (text == "wgmma") return InstructionPath::wgmma;
  return std::nullopt;
}

bool supports(const GpuProfile& gpu, InstructionPath path) {
  return path == InstructionPath::mma_sync || gpu.arch == "sm_90a";
}

std::string instruction_path_problem(const GpuProfile& gpu, InstructionPath path) {
  if (supports(gpu, path)) return {};
  return std::string(to_string(path)) + " variants need sm_90a (H100/H200); " + gpu.name + " is " +
         gpu.arch;
}

}  // namespace swr
