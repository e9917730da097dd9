// TEST FIXTURE ONLY (see memory_fs.h): construction, the journal/crash hooks, shared helpers and
// the calls on a single object. Directory-entry calls are in memory_fs_names.cc.
#include "tests/support/memory_fs.h"

#include <algorithm>
#include <thread>

namespace nasd::test_support {

using fs::Status;

MemoryFs::MemoryFs(uint32_t id, MemoryFsOptions options) : id_(id), options_(std::move(options)) {
  if (options_.persist_path.empty() || !load(&durable_)) {
    Node& root = live_.nodes[kRootIno];
    root.attr.type = fs::FileType::Dir;
    root.attr.mode = options_.root_mode;
    root.attr.nlink = 2;
    root.attr.fsid = id;
    root.attr.fileid = kRootIno;
    root.attr.atime = root.attr.mtime = root.attr.ctime = tick();
    durable_ = live_;
  }
  live_ = durable_;
}

// --- test hooks

size_t MemoryFs::inode_count() const {
  std::lock_guard lock(mu_);
  return live_.nodes.size();
}

uint32_t MemoryFs::last_readdir_max_entries() const {
  std::lock_guard lock(mu_);
  return last_max_entries_;
}

void MemoryFs::crash() {
  std::lock_guard lock(mu_);
  live_ = durable_;
}

std::vector<uint64_t> MemoryFs::applied_seqs() const {
  std::lock_guard lock(mu_);
  return applied_;
}

uint64_t MemoryFs::flushes() const {
  std::lock_guard lock(mu_);
  return flushes_;
}

void MemoryFs::set_flush_delay(std::chrono::milliseconds d) {
  std::lock_guard lock(mu_);
  flush_delay_ = d;
}

// --- JournalTarget

uint64_t MemoryFs::durable_seq() const {
  std::lock_guard lock(mu_);
  return durable_.applied_seq;
}

Status MemoryFs::flush(uint64_t* durable_seq) {
  std::chrono::milliseconds delay;
  State snapshot;
  {
    std::lock_guard lock(mu_);
    delay = flush_delay_;
    snapshot = live_;
  }
  // The slow part runs unlocked, so that a delayed flush does not stall the other calls.
  if (delay.count() > 0) std::this_thread::sleep_for(delay);
  if (!options_.persist_path.empty()) save(snapshot);
  std::lock_guard lock(mu_);
  // Only move forward: a concurrent flush may already have made a later state durable.
  if (snapshot.applied_seq >= durable_.applied_seq) durable_ = std::move(snapshot);
  ++flushes_;
  *durable_seq = durable_.applied_seq;
  return Status::Ok;
}

fs::VolumeLimits MemoryFs::limits() const {
  fs::VolumeLimits l;
  l.max_file_size = options_.max_file_size;
  l.block_size = 4096;
  l.link_max = 1000;
  l.name_max = kNameMax;
  l.time_delta = {0, 1000};
  return l;
}

// --- helpers (called with mu_ held)

MemoryFs::Node* MemoryFs::find(fs::InodeId id) {
  auto it = live_.nodes.find(id.ino);
  return it == live_.nodes.end() || it->second.gen != id.gen ? nullptr : &it->second;
}

Status MemoryFs::find_dir(fs::InodeId id, Node** out) {
  *out = find(id);
  if (!*out) return Status::Stale;
  return (*out)->attr.type == fs::FileType::Dir ? Status::Ok : Status::NotDir;
}

// Before any check can fail, the reply's WCC data already describes the directory.
Status MemoryFs::find_dir_for_change(fs::InodeId id, fs::Wcc* wcc, Node** out) {
  Status st = find_dir(id, out);
  if (st != Status::Ok) return st;
  wcc->before = pre(**out);
  wcc->after = (*out)->attr;
  return Status::Ok;
}

bool MemoryFs::allowed(const fs::Cred& cred, const Node& n, uint32_t rwx) const {
  return fs::may(cred, fs::Subject{n.attr.type, n.attr.mode, n.attr.uid, n.attr.gid}, rwx);
}

fs::Time MemoryFs::tick() { return fs::Time{live_.clock++, 0}; }

void MemoryFs::touch(Node& n, bool data_changed) {
  fs::Time now = tick();
  if (data_changed) n.attr.mtime = now;
  n.attr.ctime = now;
}

fs::PreAttr MemoryFs::pre(const Node& n) {
  return fs::PreAttr{n.attr.size, n.attr.mtime, n.attr.ctime};
}

void MemoryFs::apply(Node& n, const fs::SetAttr& sa) {
  if (sa.mode) n.attr.mode = *sa.mode & fs::kModeMask;
  if (sa.uid) n.attr.uid = *sa.uid;
  if (sa.gid) n.attr.gid = *sa.gid;
  if (sa.size) {
    n.data.resize(*sa.size);
    n.attr.size = *sa.size;
    n.attr.used = (n.attr.size + 4095) / 4096 * 4096;
  }
  if (sa.atime_how == fs::TimeHow::ServerTime) n.attr.atime = tick();
  if (sa.atime_how == fs::TimeHow::ClientTime) n.attr.atime = sa.atime;
  if (sa.mtime_how == fs::TimeHow::ServerTime) n.attr.mtime = tick();
  if (sa.mtime_how == fs::TimeHow::ClientTime) n.attr.mtime = sa.mtime;
  n.attr.ctime = tick();
}

// Every successful mutation records the journal record it came from (none: not journalled).
void MemoryFs::note_applied(const fs::OpContext&) {
  const fs::JournalTag* tag = journal_tag();
  if (!tag) return;
  applied_.push_back(tag->seq);
  live_.applied_seq = std::max(live_.applied_seq, tag->seq);
}

// --- calls on one object

Status MemoryFs::getattr(const fs::OpContext&, fs::InodeId id, fs::Attr* out) {
  std::lock_guard lock(mu_);
  Node* n = find(id);
  if (!n) return Status::Stale;
  *out = n->attr;
  return Status::Ok;
}

Status MemoryFs::setattr(const fs::OpContext& ctx, fs::InodeId id, const fs::SetAttr& sa,
                         std::optional<fs::Time> guard_ctime, fs::Wcc* wcc) {
  std::lock_guard lock(mu_);
  Node* n = find(id);
  if (!n) return Status::Stale;
  wcc->before = pre(*n);
  wcc->after = n->attr;
  if (guard_ctime && !(*guard_ctime == n->attr.ctime)) return Status::NotSync;
  const bool owner = ctx.cred.uid == 0 || ctx.cred.uid == n->attr.uid;
  if ((sa.uid && *sa.uid != n->attr.uid && ctx.cred.uid != 0) ||
      ((sa.mode || sa.gid || sa.atime_how == fs::TimeHow::ClientTime ||
        sa.mtime_how == fs::TimeHow::ClientTime) && !owner))
    return Status::Perm;
  if (sa.size) {
    if (n->attr.type == fs::FileType::Dir) return Status::IsDir;
    if (n->attr.type != fs::FileType::Reg) return Status::Inval;
    if (!allowed(ctx.cred, *n, fs::kWantWrite)) return Status::Access;
    if (*sa.size > options_.max_file_size) return Status::FBig;
  }
  apply(*n, sa);
  wcc->after = n->attr;
  note_applied(ctx);
  return Status::Ok;
}

Status MemoryFs::access(const fs::OpContext& ctx, fs::InodeId id, uint32_t requested,
                        uint32_t* granted, std::optional<fs::Attr>* attr) {
  std::lock_guard lock(mu_);
  Node* n = find(id);
  if (!n) return Status::Stale;
  *attr = n->attr;
  const bool dir = n->attr.type == fs::FileType::Dir;
  uint32_t g = 0;
  if (allowed(ctx.cred, *n, fs::kWantRead)) g |= fs::kAccessRead;
  if (allowed(ctx.cred, *n, fs::kWantWrite)) {
    g |= fs::kAccessModify | fs::kAccessExtend;
    if (dir) g |= fs::kAccessDelete;
  }
  if (allowed(ctx.cred, *n, fs::kWantExec)) g |= dir ? fs::kAccessLookup : fs::kAccessExecute;
  *granted = g & requested;
  return Status::Ok;
}

Status MemoryFs::readlink(const fs::OpContext&, fs::InodeId id, std::string* target,
                          std::optional<fs::Attr>* attr) {
  std::lock_guard lock(mu_);
  Node* n = find(id);
  if (!n) return Status::Stale;
  *attr = n->attr;
  if (n->attr.type != fs::FileType::Lnk) return Status::Inval;
  *target = n->target;
  return Status::Ok;
}

Status MemoryFs::read(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset, uint32_t count,
                      std::vector<uint8_t>* data, bool* eof, std::optional<fs::Attr>* attr) {
  std::lock_guard lock(mu_);
  Node* n = find(id);
  if (!n) return Status::Stale;
  *attr = n->attr;
  if (n->attr.type == fs::FileType::Dir) return Status::IsDir;
  if (n->attr.type != fs::FileType::Reg) return Status::Inval;
  if (!allowed(ctx.cred, *n, fs::kWantRead)) return Status::Access;
  uint64_t start = std::min<uint64_t>(offset, n->data.size());
  uint64_t end = std::min<uint64_t>(n->data.size(), start + count);
  data->assign(n->data.begin() + start, n->data.begin() + end);
  *eof = end >= n->data.size();
  return Status::Ok;
}

Status MemoryFs::write(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                       std::span<const uint8_t> data, fs::Stability, fs::Stability* committed,
                       fs::Wcc* wcc) {
  std::lock_guard lock(mu_);
  Node* n = find(id);
  if (!n) return Status::Stale;
  wcc->before = pre(*n);
  wcc->after = n->attr;
  if (n->attr.type == fs::FileType::Dir) return Status::IsDir;
  if (n->attr.type != fs::FileType::Reg) return Status::Inval;
  if (!allowed(ctx.cred, *n, fs::kWantWrite)) return Status::Access;
  const uint64_t cap = options_.max_file_size;
  if (offset > cap || data.size() > cap - offset) return Status::FBig;
  if (n->data.size() < offset + data.size()) n->data.resize(offset + data.size());
  std::copy(data.begin(), data.end(), n->data.begin() + offset);
  n->attr.size = n->data.size();
  n->attr.used = (n->attr.size + 4095) / 4096 * 4096;
  touch(*n, true);
  // Memory is as stable as this fixture gets (the journal above ignores this anyway).
  *committed = fs::Stability::FileSync;
  wcc->after = n->attr;
  note_applied(ctx);
  return Status::Ok;
}

Status MemoryFs::fsstat(const fs::OpContext&, fs::InodeId id, fs::FsStat* out,
                        std::optional<fs::Attr>* attr) {
  std::lock_guard lock(mu_);
  Node* n = find(id);
  if (!n) return Status::Stale;
  *attr = n->attr;
  uint64_t used = 0;
  for (const auto& [ino, node] : live_.nodes) used += node.attr.used;
  out->total_bytes = 1ull << 30;
  out->free_bytes = out->avail_bytes = out->total_bytes - std::min(used, out->total_bytes);
  out->total_files = 1u << 20;
  out->free_files = out->avail_files = out->total_files - live_.nodes.size();
  out->invarsec = 0;
  return Status::Ok;
}

// COMMIT makes everything applied so far durable, like the real volume's flush.
Status MemoryFs::commit(const fs::OpContext&, fs::InodeId id, uint64_t, uint32_t, fs::Wcc* wcc) {
  uint64_t durable;
  flush(&durable);
  std::lock_guard lock(mu_);
  Node* n = find(id);
  if (!n) return Status::Stale;
  wcc->before = pre(*n);
  wcc->after = n->attr;
  return n->attr.type == fs::FileType::Reg ? Status::Ok : Status::Inval;
}

}  // namespace nasd::test_support
