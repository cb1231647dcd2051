// The tensor-core instruction path a kernel variant is built on, shared by both families:
// `mma_sync` (warp-level mma.sync fed by cp.async: Ampere's path, runs on every target) or `wgmma`
// (warpgroup wgmma fed by TMA with mbarrier rings and warp specialization: Hopper's, sm_90a only).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "swr/export.h"
#include "swr/gpu_profile.hpp"

namespace swr {

enum class InstructionPath { mma_sync, wgmma };

SWR_API std::string_view to_string(InstructionPath path);
SWR_API std::optional<InstructionPath> parse_instruction_path(std::string_view text);

// Whether `gpu`'s target can run `path`: wgmma, setmaxnreg and TMA need the arch-specific sm_90a.
SWR_API bool supports(const GpuProfile& gpu, InstructionPath path);

// Empty when `gpu` can run `path`; otherwise one line naming the arch
// ("wgmma variants need sm_90a (H100/H200); gb10 is sm_121").
SWR_API std::string instruction_path_problem(const GpuProfile& gpu, InstructionPath path);

}  // namespace swr
