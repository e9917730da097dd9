// POSIX permission rules for a credential against an object's owner, group and mode, shared by
// every Volume call so that ACCESS reports exactly what the other calls enforce.
#pragma once

#include <cstdint>

#include "fs/volume.h"

namespace nasd::fs {

constexpr uint32_t kModeSetuid = 04000;
constexpr uint32_t kModeSetgid = 02000;
constexpr uint32_t kModeSticky = 01000;
constexpr uint32_t kModeMask = 07777;

// rwx request bits (as in the mode's "other" triplet).
enum Want : uint32_t { kWantExec = 1, kWantWrite = 2, kWantRead = 4 };

// The owner/group/mode/type of the object being checked.
struct Subject {
  FileType type = FileType::Reg;
  uint32_t mode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
};

bool cred_in_group(const Cred& cred, uint32_t gid);

// True when `cred` may do everything in `want` (a kWant* mask). Root may read and write anything
// and search any directory, but executes a non-directory only if some execute bit is set.
bool may(const Cred& cred, const Subject& obj, uint32_t want);

// ACCESS3: the subset of `requested` granted, with the same rules the calls enforce (entry
// changes in a directory need write + search on it).
uint32_t access_granted(const Cred& cred, const Subject& obj, uint32_t requested);

// Whether `cred` may remove or rename away `victim` (owned by victim_uid) from a directory:
// write + search on the directory, and for sticky directories also owner of the directory,
// owner of the victim, or root.
bool may_delete(const Cred& cred, const Subject& dir, uint32_t victim_uid);

// SETATTR rules: owner or root for mode and explicit times, root for uid, owner to a group it is
// a member of for gid, write permission for size and for setting times to "now". On success
// `*new_mode` is the mode after the change (setuid/setgid cleared where POSIX requires).
Status check_setattr(const Cred& cred, const Subject& obj, const SetAttr& sa, uint32_t* new_mode);

}  // namespace nasd::fs
