// The payload of an operation record: everything replay needs to repeat a mutation exactly,
// including results the file system chose (the inode a create-type operation allocated).
// One layout for every operation keeps the codec small; fields an operation does not use are
// zero. WRITE data is not part of the encoded prefix: it follows it in the record, so the
// journal copies it once, straight from the caller's buffer into NVRAM.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fs/volume.h"
#include "nvram/record.h"

namespace nasd::nvram {

struct JournalOp {
  RecordType type = RecordType::Write;
  fs::Cred cred;
  std::optional<fs::InodeId> created;  // CREATE/MKDIR/SYMLINK/MKNOD result
  fs::InodeId object;   // WRITE/SETATTR: the file; LINK: the file; others: the directory
  fs::InodeId object2;  // RENAME: destination directory; LINK: the directory
  std::string name;     // entry name (RENAME: source name)
  std::string name2;    // RENAME: destination name; SYMLINK: link target
  fs::SetAttr sattr;
  uint64_t offset = 0;    // WRITE
  uint64_t verifier = 0;  // exclusive CREATE
  fs::CreateMode create_mode = fs::CreateMode::Unchecked;
  fs::FileType node_type = fs::FileType::Reg;  // MKNOD
  uint32_t rdev_major = 0, rdev_minor = 0;
  std::span<const uint8_t> data;  // WRITE (a view, not a copy)
};

// Encodes everything but `data`.
void encode_op_prefix(const JournalOp& op, std::vector<uint8_t>* out);
// Sets the created inode in an already encoded prefix (known only after the fs call).
void patch_created(std::vector<uint8_t>* prefix, fs::InodeId id);
// Parses a record payload; `data` views into `payload`. False with a reason on malformed input.
bool decode_op(RecordType type, std::span<const uint8_t> payload, JournalOp* out,
               std::string* error);
// One line for dumps: "CREATE dir=1/0 name=\"a\" -> 12/1 uid=0".
std::string describe_op(const JournalOp& op);

}  // namespace nasd::nvram
