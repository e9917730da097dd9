#include "nvram/reply_window.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "nvram/crc32c.h"
#include "util/byte_io.h"

namespace nasd::nvram {

bool save_reply_window(const std::string& path, const std::vector<std::vector<uint8_t>>& payloads,
                       std::string* error) {
  util::ByteWriter w;
  w.u32(kReplyWindowMagic);
  w.u16(kReplyWindowVersion);
  size_t first = payloads.size() > kReplyWindowMaxEntries ? payloads.size() - kReplyWindowMaxEntries : 0;
  size_t count = 0;
  for (size_t i = first; i < payloads.size(); ++i) count += payloads[i].size() <= kReplyWindowMaxEntryBytes;
  w.u32(static_cast<uint32_t>(count));
  for (size_t i = first; i < payloads.size(); ++i)
    if (payloads[i].size() <= kReplyWindowMaxEntryBytes) w.bytes(payloads[i]);
  w.u32(crc32c(w.data().data(), w.size()));

  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = tmp + ": " + std::strerror(errno);
    return false;
  }
  const uint8_t* p = w.data().data();
  size_t left = w.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = tmp + ": " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

bool parse_reply_window(const std::vector<uint8_t>& bytes,
                        std::vector<std::vector<uint8_t>>* payloads, std::string* error) {
  payloads->clear();
  if (bytes.size() < 4) {
    *error = "reply window file too short";
    return false;
  }
  const size_t body = bytes.size() - 4;
  util::ByteReader crc_reader(std::span<const uint8_t>(bytes).subspan(body));
  uint32_t crc = 0;
  crc_reader.u32(&crc);
  if (crc != crc32c(bytes.data(), body)) {
    *error = "reply window file checksum mismatch";
    return false;
  }
  util::ByteReader r(std::span<const uint8_t>(bytes.data(), body));
  uint32_t magic = 0, count = 0;
  uint16_t version = 0;
  if (!r.u32(&magic) || !r.u16(&version) || !r.u32(&count)) {
    *error = r.error();
    return false;
  }
  if (magic != kReplyWindowMagic || version != kReplyWindowVersion) {
    *error = "not a reply window file of version " + std::to_string(kReplyWindowVersion);
    return false;
  }
  if (count > kReplyWindowMaxEntries) {
    *error = "reply window file claims " + std::to_string(count) + " entries";
    return false;
  }
  for (uint32_t i = 0; i < count; ++i) {
    std::span<const uint8_t> payload;
    if (!r.bytes(&payload, kReplyWindowMaxEntryBytes)) break;
    payloads->emplace_back(payload.begin(), payload.end());
  }
  if (!r.expect_end()) {
    *error = r.error();
    payloads->clear();
    return false;
  }
  return true;
}

bool load_reply_window(const std::string& path, std::vector<std::vector<uint8_t>>* payloads,
                       std::string* error) {
  payloads->clear();
  std::ifstream in(path, std::ios::binary);
  if (!in) return true;  // none saved: the volume was never handed over cleanly
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_reply_window(bytes, payloads, error);
}

}  // namespace nasd::nvram
