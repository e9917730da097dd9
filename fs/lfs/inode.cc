#include "fs/lfs/inode.h"

#include <cstring>

#include "fs/lfs/endian.h"

namespace nasd::fs::lfs {

namespace {
constexpr uint16_t kInodeMagic = 0x4e49;  // "IN"
constexpr uint16_t kFlagVerifier = 1;

void put_time(Encoder& e, const Time& t) {
  e.u64(uint64_t(t.sec));
  e.u32(t.nsec);
}
Time get_time(Decoder& d) {
  Time t;
  t.sec = int64_t(d.u64());
  t.nsec = d.u32();
  return t;
}
}  // namespace

void encode_inode(const Inode& in, uint8_t* slot) {
  std::memset(slot, 0, kInodeBytes);
  Encoder e(slot);
  e.u16(kInodeMagic);
  e.u16(in.has_verifier ? kFlagVerifier : 0);
  e.u32(in.gen);
  e.u64(in.ino);
  e.u32(uint32_t(in.type));
  e.u32(in.mode);
  e.u32(in.nlink);
  e.u32(in.uid);
  e.u32(in.gid);
  e.u32(in.rdev_major);
  e.u32(in.rdev_minor);
  e.u64(in.size);
  e.u64(in.blocks);
  put_time(e, in.atime);
  put_time(e, in.mtime);
  put_time(e, in.ctime);
  e.u64(in.verifier);
  e.u64(in.parent);
  e.u64(in.dir_entries);
  for (uint64_t p : in.direct) e.u64(p);
  for (uint64_t p : in.tree) e.u64(p);
}

bool decode_inode(const uint8_t* slot, Inode* in) {
  Decoder d(slot);
  if (d.u16() != kInodeMagic) return false;
  uint16_t flags = d.u16();
  in->has_verifier = flags & kFlagVerifier;
  in->gen = d.u32();
  in->ino = d.u64();
  uint32_t type = d.u32();
  if (type < uint32_t(FileType::Reg) || type > uint32_t(FileType::Fifo) || in->ino == 0)
    return false;
  in->type = FileType(type);
  in->mode = d.u32();
  in->nlink = d.u32();
  in->uid = d.u32();
  in->gid = d.u32();
  in->rdev_major = d.u32();
  in->rdev_minor = d.u32();
  in->size = d.u64();
  in->blocks = d.u64();
  in->atime = get_time(d);
  in->mtime = get_time(d);
  in->ctime = get_time(d);
  in->verifier = d.u64();
  in->parent = d.u64();
  in->dir_entries = d.u64();
  for (uint64_t& p : in->direct) p = d.u64();
  for (uint64_t& p : in->tree) p = d.u64();
  return true;
}

}  // namespace nasd::fs::lfs
