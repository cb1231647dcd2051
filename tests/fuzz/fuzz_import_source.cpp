// `swr-tune import FILE`: the input is written as a results database (SQLite) or as an export's
// manifest.json and read the way import reads it. A bad file is a UsageError naming it; a
// damaged SQLite file may also fail as a SQLite error (std::runtime_error). Nothing else escapes,
// and the source is never written.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/import_sources.hpp"
#include "swr/usage_error.hpp"

namespace {

const std::filesystem::path& scratch_directory() {
  static const std::filesystem::path directory = [] {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("swr-fuzz-import-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path / "export");
    return path;
  }();
  return directory;
}

void read_as(const std::filesystem::path& file, const std::uint8_t* data, std::size_t size) {
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  const auto before = std::filesystem::last_write_time(file);
  try {
    swr::read_import_source(file, scratch_directory() / "target.db");
  } catch (const swr::UsageError&) {
  } catch (const std::runtime_error&) {
  }
  if (std::filesystem::file_size(file) != size) __builtin_trap();  // the source was written
  if (std::filesystem::last_write_time(file) != before) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // SQLite's header starts with "SQLite format 3"; anything else is tried as a manifest too.
  const std::filesystem::path& directory = scratch_directory();
  read_as(directory / "source.db", data, size);
  if (size > 0 && data[0] == '{') read_as(directory / "export" / "manifest.json", data, size);
  for (const char* leftover : {"source.db-wal", "source.db-shm", "source.db-journal"}) {
    if (std::filesystem::exists(directory / leftover)) __builtin_trap();  // left behind
  }
  return 0;
}
