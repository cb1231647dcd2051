// What the export tests of both families share: a scratch export directory, its manifest.json read
// and written back, the message opening it gives, and the check that a damaged field is refused
// with the field named and nothing loaded.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "runtime/export_directory.hpp"
#include "swr/tuned_catalog.hpp"
#include "swr/usage_error.hpp"
#include "tests/generator/temporary_directory.hpp"

namespace swr::test {

// What every exported kernel has, whichever its family, the same after a manifest's round trip.
inline void expect_same_kernel_base(const ExportedKernelBase& a, const ExportedKernelBase& b) {
  EXPECT_EQ(a.gpu, b.gpu);
  EXPECT_EQ(a.entry, b.entry);
  EXPECT_EQ(a.block_threads, b.block_threads);
  EXPECT_EQ(a.dynamic_shared_bytes, b.dynamic_shared_bytes);
  EXPECT_EQ(a.arch, b.arch);
  EXPECT_EQ(a.cubin_file, b.cubin_file);
  EXPECT_EQ(a.cubin_bytes, b.cubin_bytes);
  EXPECT_EQ(a.cubin_sha256, b.cubin_sha256);
  EXPECT_EQ(a.registers, b.registers);
  EXPECT_EQ(a.compiled_source_hash, b.compiled_source_hash);
  EXPECT_EQ(a.toolkit_version, b.toolkit_version);
  EXPECT_EQ(a.measured.median_ms, b.measured.median_ms);
  EXPECT_EQ(a.measured.p95_ms, b.measured.p95_ms);
  EXPECT_EQ(a.measured.l2_hit_rate, b.measured.l2_hit_rate);
  EXPECT_EQ(a.measured.method, b.measured.method);
  EXPECT_EQ(a.measured.source_hash, b.measured.source_hash);
  EXPECT_EQ(a.measured.driver_version, b.measured.driver_version);
  EXPECT_EQ(a.measured.measured_at, b.measured.measured_at);
}

// One field of manifest.json changed, and what the refusal must say.
struct ManifestCorruption {
  const char* name;
  const char* pointer;   // JSON pointer of the field changed
  nlohmann::json value;  // null: the field is removed
  const char* expected;  // in the message
};

inline void PrintTo(const ManifestCorruption& corruption, std::ostream* out) {
  *out << corruption.name;
}

class ExportDirectoryTest : public ::testing::Test {
 protected:
  nlohmann::json manifest_json() const {
    std::ifstream in(out_ / "manifest.json");
    return nlohmann::json::parse(in);
  }
  void write_manifest(const nlohmann::json& json) const {
    std::ofstream(out_ / "manifest.json") << json.dump(2);
  }
  // The message of the UsageError opening the export throws (empty when it opens).
  std::string refusal() const {
    try {
      TunedCatalog::open_export(out_);
    } catch (const UsageError& error) {
      return error.what();
    }
    return {};
  }
  // Damages the export as `corruption` says; opening it must then be refused naming the field.
  void expect_refused(const ManifestCorruption& corruption) const {
    nlohmann::json json = manifest_json();
    const nlohmann::json::json_pointer pointer(corruption.pointer);
    if (corruption.value.is_null()) {
      json.at(pointer.parent_pointer()).erase(pointer.back());
    } else {
      json[pointer] = corruption.value;  // added where the field is written only when it means
    }                                    // something (a problem's kv_heads, causal_align)
    write_manifest(json);
    const std::string message = refusal();
    EXPECT_NE(message.find(corruption.expected), std::string::npos)
        << "message: " << message << "\nexpected: " << corruption.expected;
    EXPECT_NE(message.find("manifest.json"), std::string::npos) << message;
    EXPECT_THROW(load_export(out_), UsageError);
  }

  swr::testing::TemporaryDirectory directory_;
  const std::filesystem::path out_ = directory_.path() / "export";
};

}  // namespace swr::test
