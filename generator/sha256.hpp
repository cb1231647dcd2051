// SHA-256 through OpenSSL's libcrypto: cubin cache keys and entry checksums.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace swr {

class Sha256 {
 public:
  using Digest = std::array<std::uint8_t, 32>;

  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  Sha256& update(std::string_view bytes);
  Sha256& update(const void* bytes, std::size_t size);
  // Ends this hash; the object cannot be updated afterwards.
  Digest finish();

  static Digest digest(std::string_view bytes);
  static std::string hex(const Digest& digest);

 private:
  void* context_;  // EVP_MD_CTX, kept out of this header
};

}  // namespace swr
