#include "db/database_file.hpp"

#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <system_error>

#include "db/schema_migrations.hpp"

namespace swr::db {

UsageError not_sqlite(const std::filesystem::path& path) {
  return UsageError(path.string() + " is not an swr results database (not SQLite)");
}

UsageError damaged_sqlite(const std::filesystem::path& path, const std::string& detail) {
  return UsageError(path.string() +
                    " is not an swr results database (a damaged SQLite file: " + detail + ")");
}

UsageError not_a_results_database(const std::filesystem::path& path) {
  return UsageError(path.string() +
                    " is not an swr results database (an SQLite file with other tables and no "
                    "schema_version): choose another --db path");
}

UsageError schema_too_new(const std::filesystem::path& path, int version, int latest) {
  return UsageError(path.string() + " has results schema version " + std::to_string(version) +
                    ", newer than this build of swr reads (up to " + std::to_string(latest) +
                    "): use a newer swr-tune or another --db path");
}

UsageError schema_too_old_to_read(const std::filesystem::path& path, int version, int oldest,
                                  int latest) {
  return UsageError(path.string() + " has results schema version " + std::to_string(version) +
                    " and this build reads versions " + std::to_string(oldest) + " to " +
                    std::to_string(latest) +
                    ": open it once for writing (e.g. run a tune) to upgrade it");
}

UsageError stale_journal(const std::filesystem::path& path) {
  return UsageError(path.string() +
                    "-journal is a rollback journal left by a process killed while "
                    "writing " +
                    path.string() +
                    ": run any command that writes the database "
                    "(e.g. swr-tune import) as a user who may write its directory, which rolls "
                    "the unfinished transaction back");
}

UsageError no_database(const std::filesystem::path& path) {
  return UsageError("no results database at " + path.string() +
                    " (nothing tuned there yet; pass --db or set SWR_DB)");
}
namespace {

constexpr char kSqliteHeader[16] = "SQLite format 3";  // 15 characters and the terminating NUL

constexpr int kCheckBusyTimeoutMs = 10'000;

std::filesystem::path sidecar(const std::filesystem::path& path, const char* suffix) {
  return std::filesystem::path(path.string() + suffix);
}

// A non-empty rollback journal: a transaction that did not finish (an empty one is harmless).
bool has_journal(const std::filesystem::path& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(sidecar(path, "-journal"), error);
  return !error && size > 0;
}

// Opening for writing lets SQLite roll the unfinished transaction back; without write access it
// cannot, and the user is told what the journal is instead of "readonly database".
void roll_back_journal(const std::filesystem::path& path) {
  try {
    SQLite::Database database(path, SQLite::OPEN_READWRITE, kCheckBusyTimeoutMs);
    database.execAndGet("PRAGMA schema_version");
  } catch (const SQLite::Exception& error) {
    const int code = error.getErrorCode() & 0xff;
    if (code == SQLITE_READONLY || code == SQLITE_CANTOPEN || code == SQLITE_PERM) {
      throw stale_journal(path);
    }
    throw;
  }
}

// An absolute file: URI, every byte other than unreserved ones and '/' percent-encoded (a path
// may hold '?', '#' or '%').
std::string file_uri(const std::filesystem::path& path) {
  const std::string text = std::filesystem::absolute(path).string();
  std::string uri = "file:";
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
      uri += c;
    } else {
      uri += '%';
      uri += kHex[byte >> 4];
      uri += kHex[byte & 0xf];
    }
  }
  return uri;
}

constexpr std::size_t kSqliteFileHeaderBytes = 100;

std::uint32_t big_endian(const std::array<char, kSqliteFileHeaderBytes>& header, std::size_t offset,
                         std::size_t bytes) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < bytes; ++i) {
    value = (value << 8) | static_cast<unsigned char>(header[offset + i]);
  }
  return value;
}

// SQLite reads a missing tail as zeros and quick_check may not notice (the last page's cells are
// read as they come), so a file cut short is found from its size: an SQLite file is a whole
// number of pages, and at least as many as its header counts when that count is valid (the
// "version-valid-for" number equals the change counter). With a -wal beside it, the header may
// lag behind and only the page multiple is checked.
void check_whole_pages(const std::filesystem::path& path,
                       const std::array<char, kSqliteFileHeaderBytes>& header,
                       std::size_t header_bytes_read) {
  if (header_bytes_read < header.size()) {
    throw damaged_sqlite(path, "cut short: " + std::to_string(header_bytes_read) +
                                   " bytes, less than the 100-byte SQLite header");
  }
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error) return;  // the open that follows reports it
  const std::uint32_t page_field = big_endian(header, 16, 2);
  const std::uintmax_t page_size = page_field == 1 ? 65536 : page_field;
  if (page_size < 512 || page_size > 65536 || (page_size & (page_size - 1)) != 0) {
    throw damaged_sqlite(path, "page size " + std::to_string(page_size) + " in its header");
  }
  if (size % page_size != 0) {
    throw damaged_sqlite(path, "cut short or padded: " + std::to_string(size) +
                                   " bytes is not a whole number of its " +
                                   std::to_string(page_size) + "-byte pages");
  }
  const bool count_valid = big_endian(header, 92, 4) == big_endian(header, 24, 4);
  const std::uintmax_t counted_pages = big_endian(header, 28, 4);
  if (count_valid && counted_pages * page_size > size &&
      !std::filesystem::exists(sidecar(path, "-wal"), error)) {
    throw damaged_sqlite(path, "cut short: its header counts " + std::to_string(counted_pages) +
                                   " pages and the file holds " + std::to_string(size / page_size));
  }
}

// Valid header, but the pages behind it are not a database SQLite can read.
bool is_damage(const SQLite::Exception& error) {
  const int code = error.getErrorCode() & 0xff;
  return code == SQLITE_NOTADB || code == SQLITE_CORRUPT;
}

}  // namespace

DatabaseFileState inspect_database_file(const std::filesystem::path& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) return DatabaseFileState::missing;
  if (std::filesystem::is_directory(status)) {
    throw UsageError(path.string() + " is a directory, not a results database file");
  }
  if (!std::filesystem::is_regular_file(status)) {
    throw UsageError(path.string() + " is not a regular file, so not an swr results database");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) throw UsageError("cannot read the results database " + path.string());
  std::array<char, kSqliteFileHeaderBytes> header{};
  file.read(header.data(), header.size());
  const auto bytes_read = file.gcount();
  if (bytes_read == 0) return DatabaseFileState::empty;
  if (bytes_read < static_cast<std::streamsize>(sizeof(kSqliteHeader)) ||
      std::memcmp(header.data(), kSqliteHeader, sizeof(kSqliteHeader)) != 0) {
    throw not_sqlite(path);
  }
  check_whole_pages(path, header, static_cast<std::size_t>(bytes_read));
  return DatabaseFileState::sqlite;
}

int require_known_schema(SQLite::Database& database, const std::filesystem::path& path,
                         int latest) {
  try {
    const int version = read_schema_version(database);
    if (version == 0) {
      const int tables =
          database.execAndGet("SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
              .getInt();
      // Never add our tables to someone else's database.
      if (tables > 0) throw not_a_results_database(path);
    }
    if (version > latest) throw schema_too_new(path, version, latest);
    return version;
  } catch (const SQLite::Exception& error) {
    if (!is_damage(error)) throw;
    throw damaged_sqlite(path, error.what());
  }
}

int check_existing_database(const std::filesystem::path& path, int latest) {
  if (inspect_database_file(path) != DatabaseFileState::sqlite) return 0;
  try {
    if (has_journal(path)) roll_back_journal(path);
    SQLite::Database database(path, SQLite::OPEN_READONLY, kCheckBusyTimeoutMs);
    const int version = require_known_schema(database, path, latest);
    const std::string verdict = database.execAndGet("PRAGMA quick_check(1)").getString();
    if (verdict != "ok") throw damaged_sqlite(path, verdict);
    return version;
  } catch (const SQLite::Exception& error) {
    if (!is_damage(error)) throw;
    throw damaged_sqlite(path, error.what());
  }
}

std::unique_ptr<SQLite::Database> open_database_for_reading(const std::filesystem::path& path,
                                                            int busy_timeout_ms) {
  if (has_journal(path)) throw stale_journal(path);
  inspect_database_file(path);  // not SQLite, or cut short: refused before SQLite reads zeros
  std::error_code error;
  const bool writer_may_be_at_work = std::filesystem::exists(sidecar(path, "-wal"), error);
  const std::string uri = file_uri(path) + (writer_may_be_at_work ? "?mode=ro" : "?immutable=1");
  try {
    return std::make_unique<SQLite::Database>(uri, SQLite::OPEN_READONLY | SQLite::OPEN_URI,
                                              busy_timeout_ms);
  } catch (const SQLite::Exception& failure) {
    if (!is_damage(failure)) throw;
    throw damaged_sqlite(path, failure.what());
  }
}

}  // namespace swr::db
