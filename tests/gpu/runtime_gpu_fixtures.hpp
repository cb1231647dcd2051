// What the runtime's GPU tests of both families share: an export copied with its kernels claimed
// for another arch (to prove the runtime refuses a cubin the device cannot run), and the check
// that a refused call launched nothing.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "swr/device_buffer.hpp"

namespace swr::test {

// Copies the export `from` to `to`, every entry of manifest.json's `entries` ("kernels" or
// "gemm_kernels") now claiming `arch`.
inline void copy_export_for_arch(const std::filesystem::path& from, const std::filesystem::path& to,
                                 const char* entries, const std::string& arch) {
  std::filesystem::copy(from, to);
  nlohmann::json manifest = nlohmann::json::parse(std::ifstream(to / "manifest.json"));
  for (nlohmann::json& kernel : manifest.at(entries)) kernel["arch"] = arch;
  std::ofstream(to / "manifest.json") << manifest.dump(2);
}

// Output poisoned with 0xff bytes: still all 0xff after a refused call means nothing ran.
inline bool untouched(const DeviceBuffer& buffer) {
  synchronize();
  std::vector<unsigned char> bytes(buffer.size());
  buffer.copy_to_host(bytes.data(), bytes.size());
  return std::all_of(bytes.begin(), bytes.end(), [](unsigned char b) { return b == 0xff; });
}

}  // namespace swr::test
