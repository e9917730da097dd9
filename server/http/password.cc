#include "server/http/password.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "util/durable_file.h"

namespace nasd::http {
namespace {

constexpr size_t kHashBytes = 32;
constexpr uint32_t kMaxIterations = 10'000'000;  // a forged file must not stall a login

std::string pbkdf2(const std::string& password, const std::string& salt, uint32_t iterations) {
  std::string out(kHashBytes, '\0');
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                        reinterpret_cast<const unsigned char*>(salt.data()),
                        static_cast<int>(salt.size()), static_cast<int>(iterations), EVP_sha256(),
                        static_cast<int>(out.size()), reinterpret_cast<unsigned char*>(out.data())) != 1)
    throw std::runtime_error("PBKDF2 failed");
  return out;
}

std::string to_hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::optional<std::string> from_hex(const std::string& hex) {
  if (hex.size() % 2) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int v = 0;
    for (size_t j = i; j < i + 2; ++j) {
      char c = hex[j];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return std::nullopt;
      v = v * 16 + d;
    }
    out += static_cast<char>(v);
  }
  return out;
}

std::string random_bytes(size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1)
    throw std::runtime_error("RAND_bytes failed");
  return out;
}

}  // namespace

PasswordHash PasswordHash::make(const std::string& user, const std::string& password,
                                uint32_t iterations) {
  PasswordHash h;
  h.user = user;
  h.iterations = iterations;
  h.salt = random_bytes(16);
  h.hash = pbkdf2(password, h.salt, iterations);
  return h;
}

std::optional<PasswordHash> PasswordHash::parse(const std::string& line) {
  if (line.size() > 1024) return std::nullopt;
  std::istringstream in(line);
  std::string user, scheme, salt_hex, hash_hex;
  uint64_t iterations = 0;
  if (!(in >> user >> scheme >> iterations >> salt_hex >> hash_hex)) return std::nullopt;
  if (scheme != "pbkdf2-sha256" || iterations == 0 || iterations > kMaxIterations)
    return std::nullopt;
  auto salt = from_hex(salt_hex);
  auto hash = from_hex(hash_hex);
  if (!salt || !hash || salt->empty() || hash->size() != kHashBytes) return std::nullopt;
  PasswordHash h;
  h.user = user;
  h.iterations = static_cast<uint32_t>(iterations);
  h.salt = *salt;
  h.hash = *hash;
  return h;
}

std::string PasswordHash::line() const {
  return user + " pbkdf2-sha256 " + std::to_string(iterations) + " " + to_hex(salt) + " " +
         to_hex(hash);
}

bool PasswordHash::verify(const std::string& u, const std::string& password) const {
  if (password.size() > 1024) return false;
  std::string computed = pbkdf2(password, salt, iterations);
  bool same_hash = constant_time_equal(computed, hash);
  return constant_time_equal(u, user) && same_hash;
}

std::string random_password(size_t length) {
  static const char alphabet[] = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
  constexpr size_t n = sizeof alphabet - 1;
  std::string out;
  while (out.size() < length) {
    for (unsigned char c : random_bytes(length)) {
      // Rejection sampling keeps every character equally likely.
      if (c >= 256 - 256 % n) continue;
      out += alphabet[c % n];
      if (out.size() == length) break;
    }
  }
  return out;
}

std::string random_token_hex(size_t bytes) { return to_hex(random_bytes(bytes)); }

bool constant_time_equal(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::optional<PasswordHash> load_password_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line(1025, '\0');
  in.read(line.data(), static_cast<std::streamsize>(line.size()));
  line.resize(static_cast<size_t>(in.gcount()));
  line = line.substr(0, line.find('\n'));
  return PasswordHash::parse(line);
}

void store_password_file(const std::string& path, const PasswordHash& hash) {
  std::string error;
  if (!util::write_file_durably(path, hash.line() + "\n", &error))
    throw std::runtime_error("cannot write " + path + ": " + error);
}

}  // namespace nasd::http
