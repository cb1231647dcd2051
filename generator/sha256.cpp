#include "generator/sha256.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace swr {
namespace {

EVP_MD_CTX* as_context(void* context) {
  return static_cast<EVP_MD_CTX*>(context);
}

void check(int ok, const char* call) {
  if (ok != 1) throw std::runtime_error(std::string("OpenSSL ") + call + " failed");
}

}  // namespace

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  if (context_ == nullptr) throw std::runtime_error("OpenSSL EVP_MD_CTX_new failed");
  check(EVP_DigestInit_ex(as_context(context_), EVP_sha256(), nullptr), "EVP_DigestInit_ex");
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(as_context(context_));
}

Sha256& Sha256::update(const void* bytes, std::size_t size) {
  check(EVP_DigestUpdate(as_context(context_), bytes, size), "EVP_DigestUpdate");
  return *this;
}

Sha256& Sha256::update(std::string_view bytes) {
  return update(bytes.data(), bytes.size());
}

Sha256::Digest Sha256::finish() {
  Digest digest{};
  unsigned int size = 0;
  check(EVP_DigestFinal_ex(as_context(context_), digest.data(), &size), "EVP_DigestFinal_ex");
  if (size != digest.size()) throw std::runtime_error("OpenSSL SHA-256 gave an odd digest size");
  return digest;
}

Sha256::Digest Sha256::digest(std::string_view bytes) {
  Sha256 hash;
  hash.update(bytes);
  return hash.finish();
}

std::string Sha256::hex(const Digest& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(digest.size() * 2);
  for (std::uint8_t byte : digest) {
    text += kDigits[byte >> 4];
    text += kDigits[byte & 0xf];
  }
  return text;
}

}  // namespace swr
