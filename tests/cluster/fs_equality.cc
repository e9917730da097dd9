#include "tests/cluster/fs_equality.h"

#include <tuple>

namespace nasd::fs {

bool operator==(const Attr& a, const Attr& b) {
  return std::tie(a.type, a.mode, a.nlink, a.uid, a.gid, a.size, a.used, a.rdev_major,
                  a.rdev_minor, a.fsid, a.fileid, a.atime, a.mtime, a.ctime) ==
         std::tie(b.type, b.mode, b.nlink, b.uid, b.gid, b.size, b.used, b.rdev_major,
                  b.rdev_minor, b.fsid, b.fileid, b.atime, b.mtime, b.ctime);
}
bool operator==(const PreAttr& a, const PreAttr& b) {
  return std::tie(a.size, a.mtime, a.ctime) == std::tie(b.size, b.mtime, b.ctime);
}
bool operator==(const Wcc& a, const Wcc& b) {
  return a.before == b.before && a.after == b.after;
}
bool operator==(const SetAttr& a, const SetAttr& b) {
  return std::tie(a.mode, a.uid, a.gid, a.size, a.atime_how, a.atime, a.mtime_how, a.mtime) ==
         std::tie(b.mode, b.uid, b.gid, b.size, b.atime_how, b.atime, b.mtime_how, b.mtime);
}
bool operator==(const Cred& a, const Cred& b) {
  return std::tie(a.uid, a.gid, a.gids) == std::tie(b.uid, b.gid, b.gids);
}
bool operator==(const OpContext& a, const OpContext& b) {
  return a.cred == b.cred;
}
bool operator==(const DirEntry& a, const DirEntry& b) {
  return std::tie(a.name, a.fileid, a.cookie, a.id) == std::tie(b.name, b.fileid, b.cookie, b.id) &&
         a.attr == b.attr;
}
bool operator==(const ReaddirResult& a, const ReaddirResult& b) {
  return a.entries == b.entries && a.cookieverf == b.cookieverf && a.eof == b.eof &&
         a.dir_attr == b.dir_attr;
}
bool operator==(const FsStat& a, const FsStat& b) {
  return std::tie(a.total_bytes, a.free_bytes, a.avail_bytes, a.total_files, a.free_files,
                  a.avail_files, a.invarsec) ==
         std::tie(b.total_bytes, b.free_bytes, b.avail_bytes, b.total_files, b.free_files,
                  b.avail_files, b.invarsec);
}
bool operator==(const VolumeLimits& a, const VolumeLimits& b) {
  return std::tie(a.max_file_size, a.block_size, a.link_max, a.name_max, a.time_delta) ==
         std::tie(b.max_file_size, b.block_size, b.link_max, b.name_max, b.time_delta);
}

}  // namespace nasd::fs
