// NFS file handles: what a handle names (volume, inode, generation) plus a keyed tag, so a
// client can neither forge a handle for an inode it never looked up nor probe inode numbers.
//
// Layout (32 bytes, also the MOUNT v1/v2 handle size; integers big-endian):
//   [0]      format version (1)
//   [1..3]   export id: the export the handle was issued under (export_id_for_path), so the
//            rules of that export, not of another export of the same volume, apply to it.
//            0 in handles made before handles named their export (then reserved, zero).
//   [4..7]   volume id
//   [8..15]  inode number
//   [16..19] inode generation
//   [20..31] first 12 bytes of HMAC-SHA256(key, bytes 0..19)
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fs/volume.h"
#include "util/hmac_sha256.h"

namespace nasd::nfs {

struct FileHandle {
  static constexpr size_t kSize = 32;
  std::array<uint8_t, kSize> bytes{};
};

// What a valid handle names.
struct HandleTarget {
  uint32_t volume_id = 0;
  uint32_t export_id = 0;  // 0: issued before handles named their export
  fs::InodeId inode;
};

class HandleCodec {
 public:
  // `key` must hold at least kMinHandleKeyBytes bytes (see handle_key.h).
  explicit HandleCodec(std::vector<uint8_t> key);
  // Loads (or on first start creates) the key file; throws std::runtime_error on failure.
  static std::shared_ptr<HandleCodec> from_key_file(const std::string& path);

  // `export_id` is at most 24 bits (export_id_for_path); the tag covers it, so a client cannot
  // move a handle from a read-only export to a read-write one.
  FileHandle encode(uint32_t volume_id, fs::InodeId inode, uint32_t export_id = 0) const;
  // Ok, or BadHandle for a wrong length, an unknown version or a tag that does not verify. Whether the volume and inode still exist is for the caller to find.
  fs::Status decode(std::span<const uint8_t> handle, HandleTarget* out) const;

 private:
  static constexpr size_t kTagOffset = 20;
  void compute_tag(std::span<const uint8_t> body, uint8_t* tag) const;

  std::unique_ptr<util::HmacSha256> mac_;
};

}  // namespace nasd::nfs
