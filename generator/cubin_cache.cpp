#include "generator/cubin_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "generator/sha256.hpp"

namespace swr {
namespace {

// Entry file: header, then payload = u64 cubin size, cubin bytes, metadata JSON.
//   magic "SWRCUBIN" | u32 format version | u32 zero | u64 payload size | SHA-256 of payload
constexpr char kMagic[8] = {'S', 'W', 'R', 'C', 'U', 'B', 'I', 'N'};
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::size_t kHeaderSize = 8 + 4 + 4 + 8 + 32;
constexpr const char* kEntrySuffix = ".cubin";

void append_u32(std::string& out, std::uint32_t value) {
  for (int byte = 0; byte < 4; ++byte) out += static_cast<char>((value >> (8 * byte)) & 0xff);
}

void append_u64(std::string& out, std::uint64_t value) {
  for (int byte = 0; byte < 8; ++byte) out += static_cast<char>((value >> (8 * byte)) & 0xff);
}

std::uint64_t read_u64(const std::string& in, std::size_t offset) {
  std::uint64_t value = 0;
  for (int byte = 7; byte >= 0; --byte) {
    value = (value << 8) | static_cast<std::uint8_t>(in[offset + static_cast<std::size_t>(byte)]);
  }
  return value;
}

std::uint32_t read_u32(const std::string& in, std::size_t offset) {
  std::uint32_t value = 0;
  for (int byte = 3; byte >= 0; --byte) {
    value = (value << 8) | static_cast<std::uint8_t>(in[offset + static_cast<std::size_t>(byte)]);
  }
  return value;
}

// Length-prefixed, so that ("ab", "c") and ("a", "bc") hash differently.
void hash_field(Sha256& hash, std::string_view field) {
  std::string length;
  append_u64(length, field.size());
  hash.update(length).update(field);
}

// Keys name files: refuse anything that could leave the directory.
void require_safe_key(const std::string& key) {
  bool safe = !key.empty() && key.size() <= 128;
  for (char c : key)
    safe = safe && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
  if (!safe) throw std::invalid_argument("cubin cache key \"" + key + "\" is not [A-Za-z0-9_-]+");
}

nlohmann::json metadata_json(const std::string& key, const CompiledKernel& kernel) {
  return {{"cache_key", key},
          {"arch", kernel.arch},
          {"entry", kernel.entry},
          {"ok", kernel.ok},
          {"registers", kernel.registers},
          {"spill_bytes", kernel.spill_bytes},
          {"static_shared_bytes", kernel.static_shared_bytes},
          {"compile_seconds", kernel.compile_seconds},
          {"log", kernel.log}};
}

std::string encode_entry(const std::string& key, const CompiledKernel& kernel) {
  std::string payload;
  append_u64(payload, kernel.cubin.size());
  payload.append(kernel.cubin.data(), kernel.cubin.size());
  payload += metadata_json(key, kernel).dump();

  std::string entry(kMagic, sizeof(kMagic));
  append_u32(entry, kFormatVersion);
  append_u32(entry, 0);
  append_u64(entry, payload.size());
  const Sha256::Digest digest = Sha256::digest(payload);
  entry.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return entry + payload;
}

// nullopt when anything about the entry is off: wrong magic or version, wrong size, checksum
// mismatch, unreadable metadata, or metadata written for another key.
std::optional<CompiledKernel> decode_entry(const std::string& key, const std::string& entry) {
  if (entry.size() < kHeaderSize || entry.compare(0, sizeof(kMagic), kMagic, sizeof(kMagic)) != 0 ||
      read_u32(entry, 8) != kFormatVersion || read_u32(entry, 12) != 0 ||
      read_u64(entry, 16) != entry.size() - kHeaderSize) {
    return std::nullopt;
  }
  const std::string payload = entry.substr(kHeaderSize);
  const Sha256::Digest digest = Sha256::digest(payload);
  if (entry.compare(24, digest.size(), reinterpret_cast<const char*>(digest.data()),
                    digest.size()) != 0) {
    return std::nullopt;
  }
  if (payload.size() < 8) return std::nullopt;
  const std::uint64_t cubin_size = read_u64(payload, 0);
  if (cubin_size > payload.size() - 8) return std::nullopt;
  try {
    const nlohmann::json meta = nlohmann::json::parse(payload.substr(8 + cubin_size));
    if (meta.at("cache_key").get<std::string>() != key) return std::nullopt;
    CompiledKernel kernel;
    kernel.cubin.assign(payload.begin() + 8, payload.begin() + 8 + static_cast<long>(cubin_size));
    kernel.arch = meta.at("arch").get<std::string>();
    kernel.entry = meta.at("entry").get<std::string>();
    kernel.ok = meta.at("ok").get<bool>();
    kernel.registers = meta.at("registers").get<int>();
    kernel.spill_bytes = meta.at("spill_bytes").get<int>();
    kernel.static_shared_bytes = meta.at("static_shared_bytes").get<int>();
    kernel.compile_seconds = meta.at("compile_seconds").get<double>();
    kernel.log = meta.at("log").get<std::string>();
    kernel.cache_key = key;
    kernel.from_cache = true;
    return kernel;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

std::string errno_text() {
  return std::strerror(errno);
}

void write_all(int fd, const std::string& bytes, const std::filesystem::path& path) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw std::runtime_error("cannot write cubin cache file " + path.string() + ": " +
                               errno_text());
    written += static_cast<std::size_t>(n);
  }
}

}  // namespace

std::filesystem::path CubinCache::default_directory() {
  if (const char* dir = std::getenv("SWR_CACHE_DIR"); dir != nullptr && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg) {
    return std::filesystem::path(xdg) / "swr" / "cubins";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home) {
    return std::filesystem::path(home) / ".cache" / "swr" / "cubins";
  }
  return std::filesystem::temp_directory_path() / "swr-cubins";
}

CubinCache::CubinCache(std::filesystem::path directory) : directory_(std::move(directory)) {}

std::string CubinCache::key_for(const KernelSource& source, const std::vector<std::string>& options,
                                const std::string& nvrtc_version, const std::string& arch) {
  Sha256 hash;
  hash_field(hash, "swr cubin cache key v1");
  hash_field(hash, source.text);
  hash_field(hash, source.entry);
  hash_field(hash, std::to_string(source.headers.size()));
  for (const HeaderFile& header : source.headers) {
    hash_field(hash, header.include_name);
    hash_field(hash, header.text);
  }
  hash_field(hash, std::to_string(options.size()));
  for (const std::string& option : options) hash_field(hash, option);
  hash_field(hash, nvrtc_version);
  hash_field(hash, arch);
  return Sha256::hex(hash.finish());
}

std::optional<CompiledKernel> CubinCache::load(const std::string& key) const {
  require_safe_key(key);
  const std::filesystem::path path = directory_ / (key + kEntrySuffix);
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  const std::string entry((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::optional<CompiledKernel> kernel;
  if (!file.bad()) kernel = decode_entry(key, entry);
  if (!kernel) {
    // Corrupt or truncated (a crash mid-write cannot do this: writes are atomic): drop it, and
    // let the caller compile again.
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
  return kernel;
}

void CubinCache::store(const std::string& key, const CompiledKernel& kernel) const {
  require_safe_key(key);
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) {
    throw std::runtime_error("cannot create cubin cache directory " + directory_.string() + ": " +
                             error.message());
  }
  const std::filesystem::path path = directory_ / (key + kEntrySuffix);
  // A unique temporary file in the same directory, renamed over the entry once it is on disk:
  // readers see the old entry or the new one, never half of one.
  std::string temp_name = (directory_ / (key + ".tmp.XXXXXX")).string();
  const int fd = ::mkstemp(temp_name.data());
  if (fd < 0) {
    throw std::runtime_error("cannot write to cubin cache directory " + directory_.string() + ": " +
                             errno_text());
  }
  bool closed = false;
  try {
    (void)::fchmod(fd, 0644);  // mkstemp makes it 0600; a shared cache wants it readable
    write_all(fd, encode_entry(key, kernel), temp_name);
    if (::fsync(fd) != 0) {
      throw std::runtime_error("cannot sync cubin cache file " + temp_name + ": " + errno_text());
    }
    closed = true;
    if (::close(fd) != 0) {
      throw std::runtime_error("cannot close cubin cache file " + temp_name + ": " + errno_text());
    }
  } catch (...) {
    if (!closed) ::close(fd);
    ::unlink(temp_name.c_str());
    throw;
  }
  if (::rename(temp_name.c_str(), path.c_str()) != 0) {
    const std::string reason = errno_text();
    ::unlink(temp_name.c_str());
    throw std::runtime_error("cannot write cubin cache entry " + path.string() + ": " + reason);
  }
  // Make the rename itself durable (best effort: not every file system allows it).
  if (const int dir_fd = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY); dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

}  // namespace swr
