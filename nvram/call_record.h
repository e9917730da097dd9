// The payload of a Call record (record version 2, see record.h): one journalled Volume call in
// the project's one call encoding (fs/call/codec.h), the same bytes an interconnect frame
// carries for a forwarded call.
//
//   request  the encoded fs::call::VolumeRequest: volume, the caller's credential, the op's
//            arguments. WRITE's data is its last field, so the journal stores the encoded prefix
//            and the client's bytes as two pieces and copies the data only once, into NVRAM.
//   reply    the encoded fs::call::VolumeReply the call produced: status Ok (only successful
//            calls are journalled) and every out-parameter, among them the inode and generation
//            a CREATE/MKDIR/SYMLINK/MKNOD gave the client. Replay forces that inode
//            (fs::JournalTag::created) and checks that it got it.
//
// The record header keeps the volume and the sequence; nothing in the payload can set either.
// What is recorded is the call as the file system ran it: WRITE as UNSTABLE (NVRAM provides the
// stability) and SETATTR without its ctime guard (checked when the client's call ran; replayed
// timestamps differ).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fs/call/calls.h"
#include "util/byte_io.h"

namespace nasd::nvram {

// A decoded Call payload; views into the payload it was decoded from.
struct CallRecord {
  fs::call::VolumeRequest request;
  fs::call::VolumeReply reply;

  // The inode a create-type call allocated (what replay forces), if this is one.
  std::optional<fs::InodeId> created() const;
};

// The pieces of a Call payload, to append as one record: prefix, the WRITE data (empty for
// other calls, a view of the caller's buffer), suffix. Reused across calls by one thread.
struct CallRecordPieces {
  util::ByteWriter prefix;
  std::span<const uint8_t> data;
  util::ByteWriter suffix;

  // The request part; call before running the call (its size bounds the record).
  void set_request(const fs::call::VolumeRequest& recorded);
  // The reply part; call after the call succeeded.
  void set_reply(const fs::call::VolumeReply& reply);
  size_t size() const { return prefix.size() + data.size() + suffix.size(); }
};

// Parses a Call payload. False with a reason on malformed input (never a crash or an
// over-read: the journal record decoder and this are fuzzed together).
bool decode_call_record(std::span<const uint8_t> payload, CallRecord* out, std::string* error);

// Fuzzing entry point: a record header + payload as the log scan sees it.
int fuzz_journal_record(const uint8_t* data, size_t size);

}  // namespace nasd::nvram
