#include "model/xz_text.hpp"

#include <lzma.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>

namespace swr::model {
namespace {

std::string read_bytes(const std::filesystem::path& file) {
  std::ifstream stream(file, std::ios::binary);
  if (!stream) throw std::runtime_error("cannot read '" + file.string() + "'");
  return std::string(std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>());
}

}  // namespace

std::string read_maybe_xz(const std::filesystem::path& file) {
  std::string bytes = read_bytes(file);
  if (file.extension() != ".xz") return bytes;
  return decompress_xz(bytes, "'" + file.string() + "'");
}

std::string decompress_xz(std::string_view compressed, const std::string& what) {
  lzma_stream stream = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&stream, UINT64_MAX, 0) != LZMA_OK) {
    throw std::runtime_error("cannot start the xz decoder for " + what);
  }
  const std::unique_ptr<lzma_stream, void (*)(lzma_stream*)> guard(&stream, lzma_end);
  std::string text;
  char chunk[1 << 16];
  stream.next_in = reinterpret_cast<const std::uint8_t*>(compressed.data());
  stream.avail_in = compressed.size();
  lzma_ret status = LZMA_OK;
  while (status == LZMA_OK) {
    stream.next_out = reinterpret_cast<std::uint8_t*>(chunk);
    stream.avail_out = sizeof chunk;
    status = lzma_code(&stream, LZMA_FINISH);
    text.append(chunk, sizeof chunk - stream.avail_out);
  }
  if (status != LZMA_STREAM_END) {
    throw std::runtime_error(what + " is not whole xz data (liblzma status " +
                             std::to_string(static_cast<int>(status)) + ")");
  }
  return text;
}

}  // namespace swr::model
