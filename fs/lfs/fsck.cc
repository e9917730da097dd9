#include "fs/lfs/fsck.h"

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "fs/lfs/directory.h"
#include "fs/lfs/store.h"

namespace nasd::fs::lfs {

namespace {

class Checker {
 public:
  Checker(Store& s, FsckReport* r) : s_(s), r_(r), sb_(s.superblock()) {}

  void run() {
    check_imap_blocks();
    check_inodes();
    check_directories();
    check_links();
    check_usage();
    check_snapshots();
  }

 private:
  void problem(std::string p) { r_->problems.push_back(std::move(p)); }

  // Records one use of a whole block; complains about bad addresses and double use.
  void use_block(uint64_t addr, const std::string& what) {
    uint32_t seg = sb_.segment_of(addr);
    if (seg >= sb_.nsegments) {
      problem(what + " points outside the segments (block " + std::to_string(addr) + ")");
      return;
    }
    if (s_.segments().is_free(seg))
      problem(what + " points into free segment " + std::to_string(seg));
    if (!used_.insert(addr).second)
      problem(what + " uses block " + std::to_string(addr) + " that is already in use");
    live_[seg] += kBlockSize;
    r_->blocks++;
  }

  void check_imap_blocks() {
    const auto& addrs = s_.imap().block_addrs();
    for (size_t b = 0; b < addrs.size(); b++)
      if (addrs[b] != kNoAddr) use_block(addrs[b], "imap block " + std::to_string(b));
    if (s_.catalog_addr() != kNoAddr) use_block(s_.catalog_addr(), "snapshot catalog");
  }

  // Every snapshot must load (catalog, table, inode map) and every block it references must
  // lie in a segment the usage table keeps pinned, or the cleaner could reuse it.
  void check_snapshots() {
    std::set<uint32_t> ids;
    for (const SnapshotInfo& info : s_.snapshot_catalog().snapshots) {
      std::string who = "snapshot " + info.name;
      r_->snapshots++;
      if (!ids.insert(info.id).second) problem(who + " reuses id " + std::to_string(info.id));
      std::string err;
      auto snap = s_.open_snapshot(info, &err);
      if (!snap) {
        problem(err);
        continue;
      }
      const ImapEntry* root = snap->imap().find(kRootIno);
      if (!root || !root->live) problem(who + " has no root directory");
      uint64_t unpinned = 0;
      Status st = snap->for_each_referenced_block([&](uint64_t a) {
        uint32_t seg = sb_.segment_of(a);
        if (seg >= sb_.nsegments || !s_.segments().is_pinned(seg)) unpinned++;
      });
      if (st != Status::Ok) problem(who + ": cannot read its inodes or block maps");
      if (unpinned) problem(who + ": " + std::to_string(unpinned) + " blocks outside pinned segments");
    }
  }

  void check_inodes() {
    const InodeMap& imap = s_.imap();
    const ImapEntry* root = imap.find(kRootIno);
    if (!root || !root->live) problem("root inode is not allocated");
    for (uint64_t ino = kRootIno; ino < imap.next_ino(); ino++) {
      const ImapEntry* e = imap.find(ino);
      if (!e->live) continue;
      std::string who = "inode " + std::to_string(ino);
      r_->inodes++;
      if (e->addr == kNoAddr) {
        problem(who + " is live but has no on-disk copy");
        continue;
      }
      uint32_t seg = sb_.segment_of(e->addr);
      if (seg >= sb_.nsegments) {
        problem(who + " lives outside the segments");
        continue;
      }
      if (s_.segments().is_free(seg)) problem(who + " lives in free segment " + std::to_string(seg));
      if (!slots_.insert({e->addr, e->slot}).second) problem(who + " shares its inode slot");
      if (used_.count(e->addr)) problem(who + " lives in a block used for something else");
      inode_blocks_.insert(e->addr);
      live_[seg] += kInodeBytes;
      CachedInode* c;
      if (s_.load(ino, &c) != Status::Ok) {
        problem(who + " cannot be read");
        continue;
      }
      const Inode& in = c->inode;
      if (in.gen != e->gen) problem(who + " generation differs from the inode map");
      if (in.type == FileType::Dir) {
        r_->directories++;
        dirs_.push_back(ino);
      }
      if (in.type == FileType::Lnk && (in.size == 0 || in.size > 1024))
        problem(who + " is a symlink with a bad target length");
      uint64_t count = 0;
      Status st = s_.for_each_block(c, [&](uint64_t addr, RecordKind kind, uint64_t off) {
        count++;
        if (inode_blocks_.count(addr)) problem(who + " block map points at an inode block");
        use_block(addr, who + (kind == RecordKind::Node ? " node" : " block ") +
                            (kind == RecordKind::Node ? "" : std::to_string(off)));
        // Truncation frees everything past the end, so a block there is a leak.
        if (kind == RecordKind::Data && in.type != FileType::Dir && off * kBlockSize >= in.size)
          problem(who + " has block " + std::to_string(off) + " beyond its size");
      });
      if (st != Status::Ok) problem(who + " block map cannot be read");
      if (count != in.blocks)
        problem(who + " counts " + std::to_string(in.blocks) + " blocks but maps " +
                std::to_string(count));
      types_[ino] = in.type;
      nlink_[ino] = in.nlink;
      parent_[ino] = in.parent;
      if (ino % 1024 == 0) s_.trim();
    }
  }

  void check_directories() {
    for (uint64_t ino : dirs_) {
      CachedInode* c;
      if (s_.load(ino, &c) != Status::Ok) continue;
      std::string who = "directory " + std::to_string(ino);
      Directory(&s_, c).check(&r_->problems);
      uint64_t after = 0;
      for (int guard = 0; guard < (1 << 22); guard++) {
        std::vector<DirRecord> recs;
        bool eof;
        if (Directory(&s_, c).list(after, 1024, &recs, &eof) != Status::Ok) {
          problem(who + " cannot be listed");
          break;
        }
        for (const DirRecord& r : recs) {
          after = r.cookie;
          const ImapEntry* e = s_.imap().find(r.ino);
          if (!e || !e->live) {
            problem(who + " entry '" + r.name + "' names free inode " + std::to_string(r.ino));
            continue;
          }
          if (e->gen != r.gen) problem(who + " entry '" + r.name + "' has a stale generation");
          auto t = types_.find(r.ino);
          if (t != types_.end() && t->second != r.type)
            problem(who + " entry '" + r.name + "' has the wrong type");
          refs_[r.ino]++;
          if (t != types_.end() && t->second == FileType::Dir) {
            subdirs_[ino]++;
            if (parent_[r.ino] != ino)
              problem("directory " + std::to_string(r.ino) + " '..' is not its parent " +
                      std::to_string(ino));
          }
        }
        if (eof || recs.empty()) break;
      }
      s_.trim();
    }
  }

  void check_links() {
    for (auto& [ino, type] : types_) {
      std::string who = "inode " + std::to_string(ino);
      uint64_t refs = refs_[ino];
      if (ino == kRootIno) {
        if (type != FileType::Dir) problem("root is not a directory");
      } else if (refs == 0) {
        problem(who + " is an orphan (no directory entry)");
        continue;
      }
      if (type == FileType::Dir) {
        if (ino != kRootIno && refs != 1) problem(who + " is a directory with " +
                                                  std::to_string(refs) + " names");
        uint64_t want = 2 + subdirs_[ino];
        if (nlink_[ino] != want)
          problem(who + " nlink " + std::to_string(nlink_[ino]) + ", expected " +
                  std::to_string(want));
      } else if (nlink_[ino] != refs) {
        problem(who + " nlink " + std::to_string(nlink_[ino]) + " but " + std::to_string(refs) +
                " directory entries");
      }
    }
  }

  void check_usage() {
    const SegmentTable& sut = s_.segments();
    for (uint32_t seg = 0; seg < sut.nsegments(); seg++) {
      uint64_t actual = live_.count(seg) ? live_[seg] : 0;
      if (sut.live(seg) != actual)
        problem("segment " + std::to_string(seg) + " usage table says " +
                std::to_string(sut.live(seg)) + " live bytes, actual " + std::to_string(actual));
    }
  }

  Store& s_;
  FsckReport* r_;
  const Superblock& sb_;
  std::unordered_set<uint64_t> used_, inode_blocks_;
  std::set<std::pair<uint64_t, uint16_t>> slots_;
  std::unordered_map<uint32_t, uint64_t> live_;
  std::vector<uint64_t> dirs_;
  std::map<uint64_t, FileType> types_;
  std::unordered_map<uint64_t, uint32_t> nlink_;
  std::unordered_map<uint64_t, uint64_t> parent_, refs_, subdirs_;
};

}  // namespace

void fsck_store(Store& store, FsckReport* report) { Checker(store, report).run(); }

FsckReport fsck_volume(const LfsOptions& opts) {
  FsckReport r;
  LfsOptions o = opts;
  o.read_only = true;
  auto store = Store::open(o, &r.error);
  if (!store) return r;
  fsck_store(*store, &r);
  return r;
}

}  // namespace nasd::fs::lfs
