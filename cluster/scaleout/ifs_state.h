// The scale-out volume's metadata: the namespace (inodes, directories, symlinks) and, per
// file, the catalog of protection groups that hold its bytes. Pure data; the coordinator keeps
// it in memory, checkpoints it to every node's drives (ifs_image.h) and journals every change
// to it in NVRAM (the calls themselves) in between.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cluster/scaleout/group_record.h"
#include "fs/volume.h"

namespace nasd::scaleout {

// A file's bytes are cut into slots of kSlotBytes (six stripe units: one 6+2 group on four
// nodes). The write-behind writes whole slots; every group of a file lies inside one slot.
constexpr uint64_t kSlotBytes = 6ull * kStripeUnit;
constexpr uint64_t kIfsRootIno = 1;
// Unit keys of file 0 are the metadata (the checkpoint image and its head); inodes start at 1.
constexpr uint64_t kMetadataFile = 0;

struct IfsInode {
  fs::Attr attr;
  uint32_t gen = 1;
  uint64_t parent = kIfsRootIno;
  std::string target;        // symlinks
  uint64_t create_verf = 0;  // files made by EXCLUSIVE CREATE
  // Directories: name -> cookie, cookie -> (name, inode). A cookie is given once per entry and
  // never reused, so a READDIR resumes exactly after the last entry it returned.
  std::map<std::string, uint64_t, std::less<>> names;
  std::map<uint64_t, std::pair<std::string, uint64_t>> entries;
  uint64_t next_cookie = 3;  // 1 ".", 2 ".."
  // Regular files: group offset -> the group holding [offset, offset + length).
  std::map<uint64_t, GroupRecord> extents;
  // Directories: the protection policy set on this directory (`nasd-admin protection set`),
  // which files below it inherit (ifs_policy.h); none: the parent's, up to the volume's.
  std::optional<ProtectionPolicy> policy;
};

struct IfsState {
  std::map<uint64_t, IfsInode> inodes;
  uint64_t next_ino = kIfsRootIno + 1;
  uint64_t applied_seq = 0;   // highest journal record applied
  uint32_t epoch = 0;         // coordinator incarnation: one more at every open
  uint64_t next_version = 1;  // client-write group versions within the epoch
  uint32_t job_epoch = 0;     // protection passes (their versions: job_epoch << 40 | n)
  uint64_t generation = 0;    // checkpoints written
};

// Client-write versions live in the upper half of the version space, protection-job versions
// (ProtectionJob: epoch << 40 | n, epoch < 2^23) in the lower: the two never collide.
inline uint64_t client_version(uint32_t epoch, uint64_t n) {
  return (1ull << 63) | (uint64_t(epoch & 0x7fffff) << 40) | (n & ((1ull << 40) - 1));
}

// Bounded binary form of the state (little-endian), for the checkpoint image.
std::vector<uint8_t> encode_state(const IfsState& s);
// False (and why) on anything malformed: every count and length is bounded.
bool decode_state(const uint8_t* p, size_t n, IfsState* out, std::string* why);

}  // namespace nasd::scaleout
