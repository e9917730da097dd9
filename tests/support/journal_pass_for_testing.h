// TEST FIXTURE ONLY: lets a test drive a file system's journalled entry point
// (fs::JournalTarget::apply_journalled) without an NVRAM journal, to test replay of one file
// system alone. Never included by the daemon; outside tests only nvram::JournalVolume makes a
// fs::JournalPass.
#pragma once

#include "fs/journal_target.h"

namespace nasd::fs {

struct JournalPassForTesting {
  static JournalPass make() { return JournalPass{}; }
};

// Runs `args` on `target` as journal record `seq` (forcing `created` for a create-type call),
// as root unless `cred` says otherwise: what the journal does for a live call and for replay.
inline call::VolumeReply apply_journalled_for_testing(JournalTarget& target, uint64_t seq,
                                                      call::CallArgs args,
                                                      std::optional<InodeId> created = {},
                                                      Cred cred = Cred{0, 0, {}}) {
  call::VolumeRequest req;
  req.volume_id = target.id();
  req.ctx.cred = std::move(cred);
  req.args = std::move(args);
  JournalTag tag;
  tag.seq = seq;
  tag.created = created;
  return target.apply_journalled(JournalPassForTesting::make(), tag, req);
}

// The same as the journal's replay after a crash runs it (JournalTag::replay).
inline call::VolumeReply replay_journalled_for_testing(JournalTarget& target, uint64_t seq,
                                                       call::CallArgs args,
                                                       std::optional<InodeId> created = {}) {
  call::VolumeRequest req;
  req.volume_id = target.id();
  req.ctx.cred = Cred{0, 0, {}};
  req.args = std::move(args);
  JournalTag tag;
  tag.seq = seq;
  tag.created = created;
  tag.replay = true;
  return target.apply_journalled(JournalPassForTesting::make(), tag, req);
}

// The same through the volume's non-blocking WRITE attempt (JournalTarget::try_apply_journalled_write).
inline std::optional<call::VolumeReply> try_apply_journalled_write_for_testing(
    JournalTarget& target, uint64_t seq, call::WriteArgs args) {
  call::VolumeRequest req;
  req.volume_id = target.id();
  req.ctx.cred = Cred{0, 0, {}};
  req.args = std::move(args);
  JournalTag tag;
  tag.seq = seq;
  return target.try_apply_journalled_write(JournalPassForTesting::make(), tag, req);
}

}  // namespace nasd::fs
