#include "fs/permission.h"

#include <algorithm>

namespace nasd::fs {

namespace {
bool is_root(const Cred& c) { return c.uid == 0; }

// The rwx triplet that applies to the caller.
uint32_t class_bits(const Cred& cred, const Subject& obj) {
  if (cred.uid == obj.uid) return (obj.mode >> 6) & 7;
  if (cred_in_group(cred, obj.gid)) return (obj.mode >> 3) & 7;
  return obj.mode & 7;
}
}  // namespace

bool cred_in_group(const Cred& cred, uint32_t gid) {
  return cred.gid == gid || std::find(cred.gids.begin(), cred.gids.end(), gid) != cred.gids.end();
}

bool may(const Cred& cred, const Subject& obj, uint32_t want) {
  if (is_root(cred)) {
    if (!(want & kWantExec) || obj.type == FileType::Dir) return true;
    return (obj.mode & 0111) != 0;
  }
  return (class_bits(cred, obj) & want) == want;
}

uint32_t access_granted(const Cred& cred, const Subject& obj, uint32_t requested) {
  uint32_t granted = 0;
  if (may(cred, obj, kWantRead)) granted |= kAccessRead;
  if (obj.type == FileType::Dir) {
    if (may(cred, obj, kWantExec)) granted |= kAccessLookup;
    if (may(cred, obj, kWantWrite | kWantExec))
      granted |= kAccessModify | kAccessExtend | kAccessDelete;
  } else {
    if (may(cred, obj, kWantWrite)) granted |= kAccessModify | kAccessExtend;
    if (may(cred, obj, kWantExec)) granted |= kAccessExecute;
  }
  return granted & requested;
}

bool may_delete(const Cred& cred, const Subject& dir, uint32_t victim_uid) {
  if (!may(cred, dir, kWantWrite | kWantExec)) return false;
  if (!(dir.mode & kModeSticky) || is_root(cred)) return true;
  return cred.uid == dir.uid || cred.uid == victim_uid;
}

Status check_setattr(const Cred& cred, const Subject& obj, const SetAttr& sa, uint32_t* new_mode) {
  bool root = is_root(cred);
  bool owner = cred.uid == obj.uid;
  uint32_t mode = obj.mode;
  if (sa.uid && *sa.uid != obj.uid && !root) return Status::Perm;
  if (sa.gid && *sa.gid != obj.gid && !root && !(owner && cred_in_group(cred, *sa.gid)))
    return Status::Perm;
  if (sa.mode) {
    if (!root && !owner) return Status::Perm;
    mode = *sa.mode & kModeMask;
    // A non-member may not leave a file setgid to a group it does not belong to.
    uint32_t gid = sa.gid ? *sa.gid : obj.gid;
    if (!root && obj.type != FileType::Dir && !cred_in_group(cred, gid)) mode &= ~kModeSetgid;
  }
  bool explicit_time = sa.atime_how == TimeHow::ClientTime || sa.mtime_how == TimeHow::ClientTime;
  bool now_time = sa.atime_how == TimeHow::ServerTime || sa.mtime_how == TimeHow::ServerTime;
  if (explicit_time && !root && !owner) return Status::Perm;
  if (now_time && !root && !owner && !may(cred, obj, kWantWrite)) return Status::Access;
  if (sa.size) {
    if (obj.type == FileType::Dir) return Status::IsDir;
    if (obj.type != FileType::Reg) return Status::Inval;
    if (!may(cred, obj, kWantWrite)) return Status::Access;
  }
  bool chown = (sa.uid && *sa.uid != obj.uid) || (sa.gid && *sa.gid != obj.gid);
  if (chown && !root && obj.type != FileType::Dir) mode &= ~(kModeSetuid | kModeSetgid);
  *new_mode = mode;
  return Status::Ok;
}

}  // namespace nasd::fs
