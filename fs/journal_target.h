// fs::JournalTarget: what the NVRAM journal needs of the volume below it, and the only way a
// journal sequence or a forced inode reaches a file system.
//
// Durability: the file system keeps its on-disk state a prefix of the operations applied to it,
// counted in journal sequence numbers, so after a crash it recovers to some durable_seq() and
// the journal replays every record after it, each exactly once.
//
// The journal's way in: apply_journalled() runs one call (fs/call/calls.h) through the one
// dispatch (fs/call/dispatch.h) as journal record `tag`. While it runs, the implementation sees
// the tag through journal_tag() (on that thread, for that target): a mutation notes tag.seq as
// applied instead of syncing, and a create-type call allocates tag.created when it is set (a
// replayed CREATE/MKDIR/SYMLINK/MKNOD gets the very inode and generation the client was given).
// Calling it takes a JournalPass, which only the NVRAM journal can construct (passkey idiom):
// nothing decoded from a socket can carry a sequence or a forced inode, since OpContext holds
// only the credential and the interconnect's VolumeServer has no pass to hand out.
#pragma once

#include <cstdint>
#include <optional>

#include "fs/call/calls.h"
#include "fs/typed_volume.h"
#include "fs/volume.h"

namespace nasd::nvram {
class JournalVolume;
}

namespace nasd::fs {

// Proof that the caller is the NVRAM journal. Only nvram::JournalVolume (and, for tests of a
// file system's replay alone, JournalPassForTesting, defined only in tests/support) make one.
class JournalPass {
 private:
  JournalPass() = default;
  friend class nasd::nvram::JournalVolume;
  friend struct JournalPassForTesting;
};

// The journal's tag for one call.
struct JournalTag {
  uint64_t seq = 0;                 // the journal record that carries the call (> 0)
  std::optional<InodeId> created;   // replay of a create-type call: the inode to allocate
  // A replay after a restart or takeover: the call was admitted (and answered) once already,
  // so the file system lets it use room it keeps back from new calls.
  bool replay = false;
};

class JournalTarget : public TypedVolume {
 public:
  // Highest journal sequence whose effects (and all before it) are on stable storage.
  virtual uint64_t durable_seq() const = 0;
  // Writes everything applied so far to stable storage; returns the new durable_seq.
  virtual Status flush(uint64_t* durable_seq) = 0;

  // Runs `req` (a mutation of this volume) as journal record `tag` and returns every
  // out-parameter. The live call and its replay both come through here.
  call::VolumeReply apply_journalled(const JournalPass& pass, const JournalTag& tag,
                                     const call::VolumeRequest& req);
  // The same for a WRITE through the volume's non-blocking try_write() (event loop): nullopt
  // when that would block, and then nothing changed.
  std::optional<call::VolumeReply> try_apply_journalled_write(const JournalPass& pass,
                                                              const JournalTag& tag,
                                                              const call::VolumeRequest& req);

 protected:
  // The tag of the journalled call running on this thread on this target; nullptr for any
  // other call (a read, or a mutation of a volume without a journal).
  const JournalTag* journal_tag() const;
};

}  // namespace nasd::fs
