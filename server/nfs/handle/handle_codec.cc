#include "server/nfs/handle/handle_codec.h"

#include <openssl/crypto.h>

#include <stdexcept>

#include "server/nfs/handle/handle_key.h"

namespace nasd::nfs {
namespace {

constexpr uint8_t kVersion = 1;
constexpr size_t kTagBytes = FileHandle::kSize - 20;

void put_be(uint8_t* p, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; i--, v >>= 8) p[i] = static_cast<uint8_t>(v);
}

uint64_t get_be(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v = (v << 8) | p[i];
  return v;
}

}  // namespace

HandleCodec::HandleCodec(std::vector<uint8_t> key) {
  if (key.size() < kMinHandleKeyBytes) throw std::invalid_argument("file handle key too short");
  mac_ = std::make_unique<util::HmacSha256>(key);
}

std::shared_ptr<HandleCodec> HandleCodec::from_key_file(const std::string& path) {
  return std::make_shared<HandleCodec>(load_or_create_handle_key(path));
}

void HandleCodec::compute_tag(std::span<const uint8_t> body, uint8_t* tag) const {
  auto mac = mac_->compute(body);
  std::copy(mac.begin(), mac.begin() + kTagBytes, tag);
}

FileHandle HandleCodec::encode(uint32_t volume_id, fs::InodeId inode, uint32_t export_id) const {
  FileHandle fh;
  uint8_t* b = fh.bytes.data();
  b[0] = kVersion;
  put_be(b + 1, export_id & 0xffffffu, 3);
  put_be(b + 4, volume_id, 4);
  put_be(b + 8, inode.ino, 8);
  put_be(b + 16, inode.gen, 4);
  compute_tag({b, kTagOffset}, b + kTagOffset);
  return fh;
}

fs::Status HandleCodec::decode(std::span<const uint8_t> handle, HandleTarget* out) const {
  if (handle.size() != FileHandle::kSize) return fs::Status::BadHandle;
  const uint8_t* b = handle.data();
  if (b[0] != kVersion) return fs::Status::BadHandle;
  uint8_t tag[kTagBytes];
  compute_tag({b, kTagOffset}, tag);
  // Constant-time compare: timing must not reveal how many tag bytes a forgery got right.
  if (CRYPTO_memcmp(tag, b + kTagOffset, kTagBytes) != 0) return fs::Status::BadHandle;
  out->export_id = static_cast<uint32_t>(get_be(b + 1, 3));
  out->volume_id = static_cast<uint32_t>(get_be(b + 4, 4));
  out->inode.ino = get_be(b + 8, 8);
  out->inode.gen = static_cast<uint32_t>(get_be(b + 16, 4));
  return fs::Status::Ok;
}

}  // namespace nasd::nfs
