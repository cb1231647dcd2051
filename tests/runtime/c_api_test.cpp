// The C API (swr/swr.h) without a GPU: catalogs opened from a real results database and a real
// export, the best kernel as JSON (exact, nearest, none), bad paths and bad problems as
// SWR_ERROR_INVALID_ARGUMENT with the C++ API's message, and runs without a device as
// SWR_ERROR_NO_DEVICE, each with swr_last_error() naming what went wrong.
#include "swr/swr.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "runtime/kernel_exporter.hpp"
#include "swr/device_buffer.hpp"
#include "tests/generator/temporary_directory.hpp"
#include "tests/runtime/runtime_fixtures.hpp"

namespace swr::test {
namespace {

using swr::testing::TemporaryDirectory;

constexpr const char* kAttention = "m128n64w8s2-cyclic-grid-head_major";
constexpr const char* kGemm = "m128n128k32w2x4s3-grid-swz0";

struct CatalogCloser {
  void operator()(swr_catalog* catalog) const { swr_catalog_close(catalog); }
};
using CatalogHandle = std::unique_ptr<swr_catalog, CatalogCloser>;

// The JSON text a call wrote, freed with swr_string_free.
nlohmann::json taken_json(char* text) {
  const std::unique_ptr<char, void (*)(char*)> owned(text, swr_string_free);
  return nlohmann::json::parse(text);
}

class CApiTest : public ::testing::Test {
 protected:
  CApiTest() : tuned_(directory_.path() / "results.db") {
    tuned_.add(attention_shape(8, 1, 4096, 64), kAttention, 2.5);
    tuned_.add(gemm_shape(4096, 4096, 4096), kGemm, 1.25);
  }

  CatalogHandle open(const std::string& path) {
    swr_catalog* catalog = nullptr;
    EXPECT_EQ(swr_catalog_open(path.c_str(), &catalog), SWR_OK) << swr_last_error();
    EXPECT_STREQ(swr_last_error(), "");
    return CatalogHandle(catalog);
  }

  TemporaryDirectory directory_;
  TunedDatabase tuned_;
  swr_attention_problem attention_{8, 1, 4096, 4096, 64, "f16", 0};
  swr_gemm_problem gemm_{4096, 4096, 4096, "f16"};
};

TEST_F(CApiTest, AnswersATunedAttentionShapeExactlyWithWhatWasMeasured) {
  const CatalogHandle catalog = open(tuned_.path().string());
  char* text = nullptr;
  ASSERT_EQ(swr_best_attention(catalog.get(), "h200", &attention_, &text), SWR_OK);
  const nlohmann::json json = taken_json(text);
  EXPECT_EQ(json.at("family"), "attention");
  EXPECT_EQ(json.at("match"), "exact");
  EXPECT_EQ(json.at("distance"), 0.0);
  EXPECT_EQ(json.at("gpu"), "h200");
  EXPECT_EQ(json.at("source"), "results database " + tuned_.path().string());
  EXPECT_EQ(json.at("kernel").at("config_key"), kAttention);
  EXPECT_EQ(json.at("kernel").at("measured").at("median_ms"), 2.5);
  EXPECT_EQ(json.at("tuned_shape"), "b8_h1_sq4096_skv4096_d64_f16_noncausal");
}

TEST_F(CApiTest, AnswersAnUntunedShapeByTheNearestAndSaysSo) {
  const CatalogHandle catalog = open(tuned_.path().string());
  swr_attention_problem longer = attention_;
  longer.seq_q = longer.seq_kv = 8192;
  char* text = nullptr;
  ASSERT_EQ(swr_best_attention(catalog.get(), "h200", &longer, &text), SWR_OK);
  const nlohmann::json attention = taken_json(text);
  EXPECT_EQ(attention.at("match"), "nearest");
  EXPECT_GT(attention.at("distance").get<double>(), 0);
  EXPECT_EQ(attention.at("tuned_shape"), "b8_h1_sq4096_skv4096_d64_f16_noncausal");

  swr_gemm_problem wide{4096, 8192, 4096, "f16"};
  ASSERT_EQ(swr_best_gemm(catalog.get(), "h200", &wide, &text), SWR_OK);
  const nlohmann::json gemm = taken_json(text);
  EXPECT_EQ(gemm.at("family"), "gemm");
  EXPECT_EQ(gemm.at("match"), "nearest");
  EXPECT_DOUBLE_EQ(gemm.at("distance").get<double>(), 1.0);  // one factor of two on n
  EXPECT_EQ(gemm.at("kernel").at("config_key"), kGemm);
}

TEST_F(CApiTest, APointNothingTunedServesIsNoneWithWhy) {
  const CatalogHandle catalog = open(tuned_.path().string());
  swr_attention_problem causal = attention_;
  causal.causal = 1;
  char* text = nullptr;
  ASSERT_EQ(swr_best_attention(catalog.get(), "h200", &causal, &text), SWR_OK);
  const nlohmann::json none = taken_json(text);
  EXPECT_EQ(none.at("match"), "none");
  EXPECT_FALSE(none.contains("kernel"));
  EXPECT_FALSE(none.at("why").get<std::string>().empty());

  ASSERT_EQ(swr_best_gemm(catalog.get(), "h100", &gemm_, &text), SWR_OK);
  EXPECT_EQ(taken_json(text).at("match"), "none");  // tuned on another GPU only
}

TEST_F(CApiTest, AnExportAnswersAsTheDatabaseDoes) {
  ExportOptions options;
  options.gpu = "h200";
  options.out_dir = directory_.path() / "export";
  export_kernels(tuned_.database(), FakeCubinBuilder(), options);
  const CatalogHandle catalog = open(options.out_dir.string());
  char* text = nullptr;
  ASSERT_EQ(swr_catalog_description(catalog.get(), &text), SWR_OK);
  EXPECT_EQ(std::string(text), "export " + options.out_dir.string());
  swr_string_free(text);
  ASSERT_EQ(swr_best_gemm(catalog.get(), "h200", &gemm_, &text), SWR_OK);
  const nlohmann::json json = taken_json(text);
  EXPECT_EQ(json.at("match"), "exact");
  EXPECT_EQ(json.at("kernel").at("config_key"), kGemm);
}

TEST_F(CApiTest, BadPathsAreInvalidArgumentsNamingTheFile) {
  swr_catalog* catalog = reinterpret_cast<swr_catalog*>(0x1);
  const std::string missing = (directory_.path() / "missing.db").string();
  EXPECT_EQ(swr_catalog_open(missing.c_str(), &catalog), SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(catalog, nullptr);
  EXPECT_NE(std::string(swr_last_error()).find(missing), std::string::npos) << swr_last_error();

  const std::filesystem::path broken = directory_.path() / "broken-export";
  std::filesystem::create_directories(broken);
  std::ofstream(broken / "manifest.json") << "{ not json";
  const std::string not_a_manifest = broken.string();
  EXPECT_EQ(swr_catalog_open(not_a_manifest.c_str(), &catalog), SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(swr_last_error()).find("manifest.json"), std::string::npos)
      << swr_last_error();

  EXPECT_EQ(swr_catalog_open(nullptr, &catalog), SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(swr_last_error(), "path is null: allowed a pointer");
}

TEST_F(CApiTest, BadProblemsAreInvalidArgumentsWithTheRule) {
  const CatalogHandle catalog = open(tuned_.path().string());
  char* text = reinterpret_cast<char*>(0x1);
  swr_attention_problem odd_head = attention_;
  odd_head.head_dim = 48;
  EXPECT_EQ(swr_best_attention(catalog.get(), "h200", &odd_head, &text),
            SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(text, nullptr);
  EXPECT_NE(std::string(swr_last_error()).find("48"), std::string::npos) << swr_last_error();

  swr_gemm_problem fp32 = gemm_;
  fp32.dtype = "f32";
  EXPECT_EQ(swr_best_gemm(catalog.get(), "h200", &fp32, &text), SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(swr_last_error(), "unsupported dtype 'f32': allowed f16, bf16");

  swr_gemm_problem unaligned{4096, 4097, 4096, "f16"};
  EXPECT_EQ(swr_best_gemm(catalog.get(), "h200", &unaligned, &text), SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(swr_last_error()).find("4097"), std::string::npos) << swr_last_error();

  EXPECT_EQ(swr_best_gemm(catalog.get(), "", &gemm_, &text), SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(swr_best_gemm(catalog.get(), "h200", nullptr, &text), SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(swr_last_error(), "problem is null: allowed a pointer");
}

TEST_F(CApiTest, ARunWithoutADeviceIsNoDeviceAndARunThatCannotBeIsRefused) {
  if (CudaDriver::try_get() != nullptr && cuda_device_present()) {
    GTEST_SKIP() << "a device is present: the GPU tests cover launching";
  }
  const CatalogHandle catalog = open(tuned_.path().string());
  const swr_attention_tensors attention_tensors{1, 2, 3, 4, 0};
  EXPECT_EQ(swr_run_attention(catalog.get(), "h200", &attention_, &attention_tensors, 0),
            SWR_ERROR_NO_DEVICE);
  EXPECT_NE(std::string(swr_last_error()).find("no CUDA driver/device found"), std::string::npos)
      << swr_last_error();
  const swr_gemm_tensors gemm_tensors{1, 2, 3};
  EXPECT_EQ(swr_run_gemm(catalog.get(), nullptr, &gemm_, &gemm_tensors, 0), SWR_ERROR_NO_DEVICE);

  // Refused before the device is looked for: a null tensor.
  const swr_gemm_tensors no_c{1, 2, 0};
  EXPECT_EQ(swr_run_gemm(catalog.get(), "h200", &gemm_, &no_c, 0), SWR_ERROR_KERNEL_REFUSED);
  EXPECT_FALSE(std::string(swr_last_error()).empty());
  EXPECT_EQ(swr_run_gemm(catalog.get(), "h200", &gemm_, nullptr, 0), SWR_ERROR_INVALID_ARGUMENT);
}

TEST_F(CApiTest, APrepareWithoutADeviceIsNoDeviceAndBadHandlesAreInvalid) {
  if (CudaDriver::try_get() != nullptr && cuda_device_present()) {
    GTEST_SKIP() << "a device is present: the GPU tests cover prepared launches";
  }
  const CatalogHandle catalog = open(tuned_.path().string());
  swr_prepared* prepared = reinterpret_cast<swr_prepared*>(0x1);
  EXPECT_EQ(swr_prepare_attention(catalog.get(), "h200", &attention_, &prepared),
            SWR_ERROR_NO_DEVICE);
  EXPECT_EQ(prepared, nullptr);
  EXPECT_NE(std::string(swr_last_error()).find("no CUDA driver/device found"), std::string::npos)
      << swr_last_error();
  EXPECT_EQ(swr_prepare_gemm(catalog.get(), nullptr, &gemm_, &prepared), SWR_ERROR_NO_DEVICE);

  // Bad problems are named before the device is looked for.
  swr_attention_problem odd_head = attention_;
  odd_head.head_dim = 48;
  EXPECT_EQ(swr_prepare_attention(catalog.get(), "h200", &odd_head, &prepared),
            SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(swr_last_error()).find("48"), std::string::npos) << swr_last_error();
  EXPECT_EQ(swr_prepare_gemm(catalog.get(), "h200", nullptr, &prepared),
            SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(swr_last_error(), "problem is null: allowed a pointer");
  EXPECT_EQ(swr_prepare_attention(catalog.get(), "h200", &attention_, nullptr),
            SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(swr_last_error(), "prepared is null: allowed a pointer");
  EXPECT_EQ(swr_prepare_gemm(nullptr, "h200", &gemm_, &prepared), SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(swr_last_error(), "catalog is null: allowed a pointer");

  EXPECT_EQ(swr_launch_attention(nullptr, 1, 2, 3, 4, 0, 0, 0), SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(swr_last_error(), "prepared is null: allowed a pointer");
  EXPECT_EQ(swr_launch_gemm(nullptr, 1, 2, 3, 0), SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(swr_last_error(), "prepared is null: allowed a pointer");
}

// swr_attention_problem_v2: K/V heads and the causal alignment, with a size so that later
// versions may append fields; GQA shapes are looked up as such and never answered by multi-head
// ones; bad values are invalid arguments naming them.
TEST_F(CApiTest, TheSecondProblemFormCarriesKvHeadsAndAlignment) {
  TunedDatabase gqa(directory_.path() / "gqa.db");
  AttentionProblem llama = attention_shape(1, 32, 1024, 128, true);
  llama.seq_kv = 4096;
  llama.kv_heads = 8;
  llama.causal_align = CausalAlignment::bottom_right;
  gqa.add(llama, kAttention, 0.75);
  const CatalogHandle catalog = open(gqa.path().string());
  swr_attention_problem_v2 problem{
      sizeof(swr_attention_problem_v2), 1, 32, 8, 1024, 4096, 128, "f16", 1,
      SWR_CAUSAL_BOTTOM_RIGHT};
  char* text = nullptr;
  ASSERT_EQ(swr_best_attention_v2(catalog.get(), "h200", &problem, &text), SWR_OK)
      << swr_last_error();
  nlohmann::json json = taken_json(text);
  EXPECT_EQ(json.at("match"), "exact");
  EXPECT_EQ(json.at("tuned_shape"), "b1_h32_kv8_sq1024_skv4096_d128_f16_causal_br");
  EXPECT_EQ(json.at("asked").at("kv_heads"), 8);

  problem.causal_align = SWR_CAUSAL_TOP_LEFT;  // another mask: nothing tuned serves it
  ASSERT_EQ(swr_best_attention_v2(catalog.get(), "h200", &problem, &text), SWR_OK);
  EXPECT_EQ(taken_json(text).at("match"), "none");
  problem.causal_align = SWR_CAUSAL_BOTTOM_RIGHT;
  problem.kv_heads = 0;  // multi-head: another ratio
  ASSERT_EQ(swr_best_attention_v2(catalog.get(), "h200", &problem, &text), SWR_OK);
  EXPECT_EQ(taken_json(text).at("match"), "none");

  problem.kv_heads = 6;
  EXPECT_EQ(swr_best_attention_v2(catalog.get(), "h200", &problem, &text),
            SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(swr_last_error()).find("kv_heads 6 does not divide heads 32"),
            std::string::npos)
      << swr_last_error();
  problem.kv_heads = 8;
  problem.causal_align = 2;
  EXPECT_EQ(swr_best_attention_v2(catalog.get(), "h200", &problem, &text),
            SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(swr_last_error()).find("causal_align 2"), std::string::npos);
  problem.causal_align = SWR_CAUSAL_BOTTOM_RIGHT;
  problem.size = 8;
  EXPECT_EQ(swr_best_attention_v2(catalog.get(), "h200", &problem, &text),
            SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(swr_last_error()).find("swr_attention_problem_v2.size 8"),
            std::string::npos);
  // Strides that are no layout are named before any device is looked for.
  problem.size = sizeof(swr_attention_problem_v2);
  swr_attention_tensors tensors{256, 512, 768, 1024, 0};
  swr_attention_strides strides{};
  strides.q[0] = 32 * 1024 * 256;
  strides.q[1] = 1024 * 256;
  strides.q[2] = 256;
  strides.q[3] = 2;
  EXPECT_EQ(swr_run_attention_v2(catalog.get(), "h200", &problem, &tensors, &strides, 0),
            SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(swr_last_error()).find("the head_dim stride must be 1"), std::string::npos)
      << swr_last_error();
  if (CudaDriver::try_get() == nullptr || !cuda_device_present()) {
    strides.q[3] = 1;
    EXPECT_EQ(swr_run_attention_v2(catalog.get(), "h200", &problem, &tensors, &strides, 0),
              SWR_ERROR_NO_DEVICE);
    swr_prepared* prepared = reinterpret_cast<swr_prepared*>(0x1);
    EXPECT_EQ(swr_prepare_attention_v2(catalog.get(), "h200", &problem, &prepared),
              SWR_ERROR_NO_DEVICE);
    EXPECT_EQ(prepared, nullptr);
  }
  EXPECT_EQ(swr_launch_attention_v2(nullptr, 1, 2, 3, 4, &strides, 0, 0, 0),
            SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(swr_last_error(), "prepared is null: allowed a pointer");
}

// The variables the default path depends on, restored when the test ends.
class EnvironmentRestorer {
 public:
  explicit EnvironmentRestorer(std::initializer_list<const char*> names) {
    for (const char* name : names) {
      const char* value = std::getenv(name);
      saved_.emplace_back(name,
                          value == nullptr ? std::nullopt : std::optional<std::string>(value));
    }
  }
  ~EnvironmentRestorer() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

std::string taken_string(char* text) {
  const std::unique_ptr<char, void (*)(char*)> owned(text, swr_string_free);
  return text;
}

TEST(CApiDefaultCatalog, IsSwrDbElseTheUserCacheAsSwrTuneHasIt) {
  const EnvironmentRestorer restorer({"SWR_DB", "XDG_CACHE_HOME", "HOME"});
  char* path = nullptr;
  setenv("SWR_DB", "/data/tuned.db", 1);
  ASSERT_EQ(swr_default_catalog_path(&path), SWR_OK) << swr_last_error();
  EXPECT_EQ(taken_string(path), "/data/tuned.db");
  setenv("SWR_DB", "", 1);
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  ASSERT_EQ(swr_default_catalog_path(&path), SWR_OK) << swr_last_error();
  EXPECT_EQ(taken_string(path), "/xdg/swr/results.db");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/someone", 1);
  ASSERT_EQ(swr_default_catalog_path(&path), SWR_OK) << swr_last_error();
  EXPECT_EQ(taken_string(path), "/home/someone/.cache/swr/results.db");
  unsetenv("HOME");
  EXPECT_EQ(swr_default_catalog_path(&path), SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(path, nullptr);
  EXPECT_NE(std::string(swr_last_error()).find("neither SWR_DB, XDG_CACHE_HOME nor HOME"),
            std::string::npos)
      << swr_last_error();
}

TEST(CApiDeviceName, ABadOrdinalIsInvalidAndNoDeviceIsNoDevice) {
  char* name = reinterpret_cast<char*>(1);
  EXPECT_EQ(swr_device_gpu_name(-1, &name), SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(name, nullptr);
  EXPECT_STREQ(swr_last_error(), "device ordinal -1: allowed 0 or more");
  EXPECT_EQ(swr_device_gpu_name(0, nullptr), SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(swr_last_error(), "name is null: allowed a pointer");
  if (CudaDriver::try_get() != nullptr && cuda_device_present()) {
    ASSERT_EQ(swr_device_gpu_name(0, &name), SWR_OK) << swr_last_error();
    const std::unique_ptr<char, void (*)(char*)> owned(name, swr_string_free);
    EXPECT_GT(std::string(name).size(), 0u);
    return;
  }
  EXPECT_EQ(swr_device_gpu_name(0, &name), SWR_ERROR_NO_DEVICE);
  EXPECT_NE(std::string(swr_last_error()).find("no CUDA driver/device found"), std::string::npos)
      << swr_last_error();
}

TEST(CApiNames, StatusesAndVersionAreNamed) {
  EXPECT_STREQ(swr_status_name(SWR_OK), "ok");
  EXPECT_STREQ(swr_status_name(SWR_ERROR_INVALID_ARGUMENT), "invalid argument");
  EXPECT_STREQ(swr_status_name(SWR_ERROR_KERNEL_REFUSED), "kernel refused");
  EXPECT_STREQ(swr_status_name(SWR_ERROR_NO_DEVICE), "no device");
  EXPECT_STREQ(swr_status_name(SWR_ERROR_CUDA), "CUDA error");
  EXPECT_STREQ(swr_status_name(SWR_ERROR_INTERNAL), "internal error");
  EXPECT_STREQ(swr_status_name(42), "unknown status");
  EXPECT_STREQ(swr_version(), SWR_VERSION);
}

}  // namespace
}  // namespace swr::test
