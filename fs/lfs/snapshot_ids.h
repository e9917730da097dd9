// How a file handle names something inside a snapshot. Snapshots are reached through the
// `.snapshot` directory of every live directory; their files must never be mistaken for the
// live ones (a client caches by fileid), and their handles must survive restarts while the
// snapshot exists and turn STALE once it is deleted. So the snapshot is part of the inode id:
//
//   ino = kSnapshotSpace | snapshot_id << kSnapshotIdShift | base_ino
//
//   bit 63           always 0 (keeps clear of kJunctionIno = UINT64_MAX)
//   bit 62           kSnapshotSpace: the id names something under a `.snapshot` directory
//   bits 40..61      snapshot id (22 bits): 0 = the `.snapshot` directory itself,
//                    n >= 1 = snapshot number n of the volume
//   bits 0..39       base_ino: the live inode number (id 0: the directory that holds
//                    `.snapshot`; id n: the inode as it was in snapshot n)
//   gen              id 0: the live directory's generation; id n: the inode's generation in
//                    snapshot n
//
// Invariants:
//  * Live inode numbers are below 2^40 (the format caps max_inodes at 2^26), so no live id has
//    bit 62 set and every snapshot id is distinct from every live id; the fileid a client sees is
//    the whole encoded ino, so it is distinct too.
//  * Snapshot ids are handed out by a counter kept in the snapshot catalog and never reused, so
//    a handle to a deleted snapshot can never name a later one: it is STALE for ever.
//  * (base_ino, gen) are checked against the snapshot's own inode map, exactly as live handles
//    are checked against the live one.
#pragma once

#include <cstdint>

#include "fs/volume.h"

namespace nasd::fs::lfs {

constexpr uint64_t kSnapshotSpace = 1ull << 62;
constexpr unsigned kSnapshotIdShift = 40;
constexpr uint64_t kBaseInoMask = (1ull << kSnapshotIdShift) - 1;
constexpr uint32_t kMaxSnapshotId = (1u << 22) - 1;

inline bool in_snapshot_space(uint64_t ino) { return (ino >> 62) == 1; }
inline uint32_t snapshot_of(uint64_t ino) {
  return uint32_t((ino >> kSnapshotIdShift) & kMaxSnapshotId);
}
inline uint64_t base_ino_of(uint64_t ino) { return ino & kBaseInoMask; }
inline uint64_t snapshot_ino(uint32_t snapshot_id, uint64_t base_ino) {
  return kSnapshotSpace | (uint64_t(snapshot_id) << kSnapshotIdShift) | (base_ino & kBaseInoMask);
}
// The `.snapshot` directory of live directory `dir`.
inline InodeId snapshot_dir_id(InodeId dir) { return InodeId{snapshot_ino(0, dir.ino), dir.gen}; }

// The name of the hidden directory, as appliances spell it.
inline constexpr const char* kSnapshotDirName = ".snapshot";

}  // namespace nasd::fs::lfs
