// Which devices a cubin can run on. A cubin for sm_XY runs on compute capability X.Z with Z >= Y;
// one for the arch-specific sm_XYa (wgmma, setmaxnreg) on X.Y only; one for the family-specific
// sm_XYf on X.Z with Z >= Y. Nothing runs across major versions: a cubin is machine code.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace swr {

struct CubinArch {
  int major = 0;
  int minor = 0;
  char variant = '\0';  // '\0', 'a' (arch-specific) or 'f' (family-specific)
};

// "sm_90a" -> {9, 0, 'a'}; nullopt for anything else, including archs CUDA 13 does not compile
// for.
std::optional<CubinArch> parse_cubin_arch(std::string_view arch);

// "sm_75, sm_80, ..., sm_121 (each also with an a or f suffix)": for error messages.
std::string known_cubin_archs();

// Why a device of compute capability major.minor cannot run a cubin for `arch` ("a cubin for
// sm_90a runs on compute capability 9.0 only; this device is 12.1"), or empty when it can.
std::string cubin_arch_mismatch(std::string_view arch, int major, int minor);

}  // namespace swr
