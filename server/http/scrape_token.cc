#include "server/http/scrape_token.h"

#include <fcntl.h>
#include <strings.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "server/http/password.h"
#include "util/durable_file.h"
#include "util/secret_key.h"

namespace nasd::http {

TokenFile load_token_file(const std::string& path) {
  TokenFile out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) out.error = "cannot open " + path + ": " + std::strerror(errno);
    return out;
  }
  char buf[512];
  ssize_t n = -1;
  try {
    check_private_file(fd, path, "token file");
    n = ::read(fd, buf, sizeof buf);
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  ::close(fd);
  if (!out.error.empty()) return out;
  if (n < 0) return out.error = "cannot read " + path + ": " + std::strerror(errno), out;
  std::string token(buf, static_cast<size_t>(n));
  token = token.substr(0, token.find('\n'));
  bool printable = true;
  for (char c : token) printable = printable && c > ' ' && c < 127;
  if (token.size() < 32 || token.size() > 256 || !printable)
    return out.error = "token file " + path + ": one line of 32-256 printable characters expected", out;
  out.token = token;
  return out;
}

std::string store_new_token_file(const std::string& path) {
  const std::string token = random_token_hex(32);
  std::string error;
  if (!util::write_file_durably(path, token + "\n", &error))
    throw std::runtime_error("cannot write " + path + ": " + error);
  return token;
}

std::optional<std::string> bearer_token(const std::string& authorization) {
  if (authorization.size() <= 7 || ::strncasecmp(authorization.c_str(), "bearer ", 7) != 0)
    return std::nullopt;
  std::string token = authorization.substr(7);
  const size_t start = token.find_first_not_of(' ');
  if (start == std::string::npos) return std::nullopt;
  return token.substr(start);
}

}  // namespace nasd::http
