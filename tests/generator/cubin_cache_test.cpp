#include "generator/cubin_cache.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "generator/kernel_source.hpp"
#include "temporary_directory.hpp"

namespace swr {
namespace {

using testing::TemporaryDirectory;

CompiledKernel sample_kernel() {
  CompiledKernel kernel;
  kernel.arch = "sm_90a";
  kernel.entry = "swr_attention_forward";
  kernel.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\x01', '\xff', 'x', 'y', 'z'};
  kernel.log =
      "ptxas info    : Used 168 registers, used 1 barriers, 16 bytes smem\n\"quoted\" \xc3\xa9";
  kernel.ok = true;
  kernel.registers = 168;
  kernel.spill_bytes = 8;
  kernel.static_shared_bytes = 16;
  kernel.compile_seconds = 3.25;
  return kernel;
}

KernelSource sample_source() {
  KernelSource source;
  source.name = "a.cu";
  source.entry = "swr_attention_forward";
  source.text = "extern \"C\" __global__ void swr_attention_forward() {}";
  source.headers = {{"attention/forward_kernel.cuh", "// kernel"}, {"common/mma.cuh", "// mma"}};
  return source;
}

const std::vector<std::string> kOptions = {"-arch=sm_90a", "-std=c++17"};

std::filesystem::path entry_path(const CubinCache& cache, const std::string& key) {
  return cache.directory() / (key + ".cubin");
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << bytes;
}

void expect_same_kernel(const CompiledKernel& loaded, const CompiledKernel& stored,
                        const std::string& key) {
  EXPECT_EQ(loaded.cubin, stored.cubin);
  EXPECT_EQ(loaded.arch, stored.arch);
  EXPECT_EQ(loaded.entry, stored.entry);
  EXPECT_EQ(loaded.log, stored.log);
  EXPECT_EQ(loaded.ok, stored.ok);
  EXPECT_EQ(loaded.registers, stored.registers);
  EXPECT_EQ(loaded.spill_bytes, stored.spill_bytes);
  EXPECT_EQ(loaded.static_shared_bytes, stored.static_shared_bytes);
  EXPECT_DOUBLE_EQ(loaded.compile_seconds, stored.compile_seconds);
  EXPECT_EQ(loaded.cache_key, key);
  EXPECT_TRUE(loaded.from_cache);
}

TEST(CubinCache, KeyCoversEverythingThatChangesTheBinary) {
  const KernelSource source = sample_source();
  const std::string key = CubinCache::key_for(source, kOptions, "13.0", "sm_90a");
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, CubinCache::key_for(source, kOptions, "13.0", "sm_90a"));
  EXPECT_NE(key, CubinCache::key_for(source, kOptions, "13.1", "sm_90a"));
  EXPECT_NE(key, CubinCache::key_for(source, kOptions, "13.0", "sm_121"));
  EXPECT_NE(key, CubinCache::key_for(source, {"-arch=sm_90a"}, "13.0", "sm_90a"));
  KernelSource changed = source;
  changed.text += " ";
  EXPECT_NE(key, CubinCache::key_for(changed, kOptions, "13.0", "sm_90a"));
  changed = source;
  changed.headers[1].text = "// mma v2";
  EXPECT_NE(key, CubinCache::key_for(changed, kOptions, "13.0", "sm_90a"));
  changed = source;
  changed.headers[1].include_name = "common/mma2.cuh";
  EXPECT_NE(key, CubinCache::key_for(changed, kOptions, "13.0", "sm_90a"));
  changed = source;
  changed.headers.pop_back();
  EXPECT_NE(key, CubinCache::key_for(changed, kOptions, "13.0", "sm_90a"));
  // The display name is not part of the binary.
  changed = source;
  changed.name = "b.cu";
  EXPECT_EQ(key, CubinCache::key_for(changed, kOptions, "13.0", "sm_90a"));
}

TEST(CubinCache, StoreLoadRoundTripSurvivesANewCacheObject) {
  TemporaryDirectory temp;
  const std::filesystem::path dir = temp.path() / "nested" / "cubins";
  const std::string key = CubinCache::key_for(sample_source(), kOptions, "13.0", "sm_90a");
  {
    CubinCache cache(dir);
    EXPECT_FALSE(std::filesystem::exists(dir));  // created on first store, not before
    EXPECT_FALSE(cache.load(key).has_value());
    cache.store(key, sample_kernel());
    expect_same_kernel(cache.load(key).value(), sample_kernel(), key);
  }
  // A new object on the same directory: what a restarted process sees.
  CubinCache restarted(dir);
  expect_same_kernel(restarted.load(key).value(), sample_kernel(), key);
  // No temporary files are left behind.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(entry.path().filename(), key + ".cubin");
  }
  EXPECT_EQ(files, 1);
}

TEST(CubinCache, StoreReplacesAnExistingEntry) {
  TemporaryDirectory temp;
  CubinCache cache(temp.path());
  CompiledKernel kernel = sample_kernel();
  cache.store("k1", kernel);
  kernel.cubin.assign(5000, 'q');
  kernel.registers = 40;
  cache.store("k1", kernel);
  expect_same_kernel(cache.load("k1").value(), kernel, "k1");
}

TEST(CubinCache, FlippedByteAnywhereIsAMissAndTheEntryIsRemoved) {
  TemporaryDirectory temp;
  CubinCache cache(temp.path());
  cache.store("entry", sample_kernel());
  const std::string good = read_file(entry_path(cache, "entry"));
  ASSERT_GT(good.size(), 100u);
  // Magic, version, length, checksum, cubin bytes, metadata JSON.
  for (std::size_t offset : {std::size_t{0}, std::size_t{9}, std::size_t{13}, std::size_t{17},
                             std::size_t{30}, std::size_t{60}, std::size_t{70}, good.size() - 2}) {
    std::string corrupt = good;
    corrupt[offset] = static_cast<char>(corrupt[offset] ^ 0x20);
    write_file(entry_path(cache, "entry"), corrupt);
    EXPECT_FALSE(cache.load("entry").has_value()) << "flipped byte " << offset;
    EXPECT_FALSE(std::filesystem::exists(entry_path(cache, "entry"))) << "byte " << offset;
  }
}

TEST(CubinCache, TruncatedOrEmptyEntryIsAMissAndRemoved) {
  TemporaryDirectory temp;
  CubinCache cache(temp.path());
  cache.store("entry", sample_kernel());
  const std::string good = read_file(entry_path(cache, "entry"));
  for (std::size_t size : {good.size() - 1, good.size() / 2, std::size_t{20}, std::size_t{0}}) {
    write_file(entry_path(cache, "entry"), good.substr(0, size));
    EXPECT_FALSE(cache.load("entry").has_value()) << "truncated to " << size;
    EXPECT_FALSE(std::filesystem::exists(entry_path(cache, "entry")));
  }
  // Appended garbage too.
  write_file(entry_path(cache, "entry"), good + "x");
  EXPECT_FALSE(cache.load("entry").has_value());
  // And a healthy store afterwards works again.
  cache.store("entry", sample_kernel());
  EXPECT_TRUE(cache.load("entry").has_value());
}

TEST(CubinCache, EntryRenamedToAnotherKeyIsRejected) {
  TemporaryDirectory temp;
  CubinCache cache(temp.path());
  cache.store("first", sample_kernel());
  std::filesystem::rename(entry_path(cache, "first"), entry_path(cache, "second"));
  EXPECT_FALSE(cache.load("second").has_value());
}

TEST(CubinCache, UncreatableDirectoryNamesThePath) {
  TemporaryDirectory temp;
  write_file(temp.path() / "plain-file", "not a directory");
  const std::filesystem::path dir = temp.path() / "plain-file" / "cubins";
  CubinCache cache(dir);
  EXPECT_FALSE(cache.load("entry").has_value());
  try {
    cache.store("entry", sample_kernel());
    FAIL() << "store into " << dir << " succeeded";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find(dir.string()), std::string::npos) << error.what();
  }
}

TEST(CubinCache, ReadOnlyDirectoryNamesThePath) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes into read-only directories";
  TemporaryDirectory temp;
  const std::filesystem::path dir = temp.path() / "locked";
  std::filesystem::create_directory(dir);
  std::filesystem::permissions(
      dir, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  try {
    CubinCache(dir).store("entry", sample_kernel());
    FAIL() << "store into read-only " << dir << " succeeded";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find(dir.string()), std::string::npos) << error.what();
  }
}

TEST(CubinCache, RejectsKeysThatAreNotFileNames) {
  TemporaryDirectory temp;
  CubinCache cache(temp.path());
  EXPECT_THROW(cache.load("../escape"), std::invalid_argument);
  EXPECT_THROW(cache.store("a/b", sample_kernel()), std::invalid_argument);
  EXPECT_THROW(cache.load(""), std::invalid_argument);
}

TEST(CubinCache, DefaultDirectoryFollowsTheEnvironment) {
  const char* saved = std::getenv("SWR_CACHE_DIR");
  const std::string saved_value = saved ? saved : "";
  setenv("SWR_CACHE_DIR", "/some/where", 1);
  EXPECT_EQ(CubinCache::default_directory(), "/some/where");
  unsetenv("SWR_CACHE_DIR");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string xdg_value = xdg ? xdg : "";
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(CubinCache::default_directory(), "/xdg/swr/cubins");
  if (xdg)
    setenv("XDG_CACHE_HOME", xdg_value.c_str(), 1);
  else
    unsetenv("XDG_CACHE_HOME");
  if (saved) setenv("SWR_CACHE_DIR", saved_value.c_str(), 1);
}

}  // namespace
}  // namespace swr
