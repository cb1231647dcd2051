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
