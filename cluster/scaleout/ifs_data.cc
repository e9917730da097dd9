// IfsVolume's data path: READ and WRITE through the dirty slots, truncation, and flush(): the
// write-behind of slots as protection groups, then the metadata checkpoint (see ifs_volume.h).
#include <algorithm>
#include <cstring>
#include <future>
#include <set>
#include <thread>

#include "cluster/scaleout/ifs_image.h"
#include "cluster/scaleout/ifs_policy.h"
#include "cluster/scaleout/ifs_volume.h"
#include "fs/permission.h"
#include "util/log.h"

namespace nasd::scaleout {

using fs::Status;

namespace {

// flush(): plans of one slot tried per flush (the first on the flush's topology, the others on
// the topology of the moment), the versions each plan may use (a slot is cut into at most
// kMaxData groups), and rewrites of a group's refused units before the slot is planned again,
// after 100, 200, 400, 800, 1000 ms: about 2.5 s, which outlasts a node's hiccup under load
// (its unit calls time out and its link reconnects) and gives the liveness probes time to
// find a node that is really gone, so that the next plan leaves it out.
constexpr int kSlotPlans = 3;
constexpr uint64_t kVersionsPerPlan = kMaxData + 1;
constexpr int kUnitRetries = 5;
std::chrono::milliseconds retry_delay(int retry) {
  return std::chrono::milliseconds(std::min(1000, 100 << (retry - 1)));
}

std::vector<GroupRecord> slot_records(const IfsInode& n, uint64_t slot) {
  std::vector<GroupRecord> out;
  const uint64_t lo = slot * kSlotBytes, hi = lo + kSlotBytes;
  for (auto it = n.extents.lower_bound(lo); it != n.extents.end() && it->first < hi; ++it)
    out.push_back(it->second);
  return out;
}

bool same_versions(const std::vector<GroupRecord>& a, const std::vector<GroupRecord>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (a[i].version != b[i].version || a[i].offset != b[i].offset || !(a[i].places == b[i].places)) return false;
  return true;
}

}  // namespace

void IfsVolume::throw_away(const GroupRecord& r, uint64_t snapshot) {
  Garbage g;
  g.snapshot = snapshot;
  for (size_t i = 0; i < r.places.size(); i++) g.units.push_back(UnitRef{r.places[i], r.key(int(i))});
  garbage_.push_back(std::move(g));
}

void IfsVolume::cache_drop(uint64_t ino, uint64_t slot) {
  if (cache_.erase({ino, slot})) cache_order_.remove({ino, slot});
}

// Reads the slot's flushed bytes (its groups) into *out, unlocking meanwhile. Retries when a
// flush or re-protect replaced the groups while they were read.
bool IfsVolume::load_slot(std::unique_lock<std::mutex>& lk, uint64_t ino, uint64_t slot,
                          std::vector<uint8_t>* out) {
  const uint64_t lo = slot * kSlotBytes;
  for (int attempt = 0; attempt < 4; attempt++) {
    auto it = live_.inodes.find(ino);
    if (it == live_.inodes.end()) return false;
    std::vector<GroupRecord> recs = slot_records(it->second, slot);
    if (recs.empty()) {
      out->clear();
      return true;
    }
    uint64_t size = 0;
    for (const GroupRecord& r : recs) size = std::max(size, r.offset + r.length - lo);
    std::vector<uint8_t> buf(size, 0);
    bool ok = true;
    std::string error;
    lk.unlock();
    for (const GroupRecord& r : recs) {
      std::vector<uint8_t> bytes;
      GroupHealth health;
      if (!io_.read_group(r, &bytes, &health, &error)) {
        ok = false;
        break;
      }
      std::copy(bytes.begin(), bytes.begin() + static_cast<long>(std::min<uint64_t>(bytes.size(), r.length)),
                buf.begin() + static_cast<long>(r.offset - lo));
    }
    lk.lock();
    it = live_.inodes.find(ino);
    if (it == live_.inodes.end()) return false;
    if (!same_versions(recs, slot_records(it->second, slot))) continue;
    if (!ok) {
      util::log("ifs").error("volume " + options_.name + ": file " + std::to_string(ino) +
                             " slot " + std::to_string(slot) + " unreadable: " + error);
      return false;
    }
    *out = std::move(buf);
    return true;
  }
  return false;
}

IfsVolume::SlotBytes IfsVolume::dirty_slot(std::unique_lock<std::mutex>& lk, uint64_t ino,
                                           uint64_t slot, bool need_old) {
  const SlotKey key{ino, slot};
  if (auto d = dirty_.find(key); d != dirty_.end()) return d->second;
  SlotBytes buf;
  if (auto f = flushing_.find(key); f != flushing_.end()) {
    buf = std::make_shared<std::vector<uint8_t>>(*f->second);
  } else if (auto c = cache_.find(key); c != cache_.end()) {
    buf = std::make_shared<std::vector<uint8_t>>(*c->second);
  } else {
    buf = std::make_shared<std::vector<uint8_t>>();
    if (need_old && !load_slot(lk, ino, slot, buf.get())) return nullptr;
    // Another call may have made it dirty while the lock was dropped: the newer bytes win.
    if (auto d = dirty_.find(key); d != dirty_.end()) return d->second;
    if (auto f = flushing_.find(key); f != flushing_.end())
      buf = std::make_shared<std::vector<uint8_t>>(*f->second);
  }
  cache_drop(ino, slot);
  dirty_[key] = buf;
  return buf;
}

void IfsVolume::resize_file(std::unique_lock<std::mutex>& lk, IfsInode& node, uint64_t ino, uint64_t size) {
  const uint64_t old = node.attr.size;
  if (size < old) {
    // The slot holding the new end keeps its head, zeros after (a later extension reads zeros).
    if (size % kSlotBytes != 0) {
      const uint64_t k = size / kSlotBytes;
      SlotBytes buf = dirty_slot(lk, ino, k, true);
      if (buf && buf->size() > size - k * kSlotBytes) buf->resize(size - k * kSlotBytes);
    }
    auto it = live_.inodes.find(ino);
    if (it == live_.inodes.end()) return;
    IfsInode& n = it->second;
    const uint64_t first_gone = (size + kSlotBytes - 1) / kSlotBytes;  // first slot wholly beyond
    for (auto e = n.extents.lower_bound(first_gone * kSlotBytes); e != n.extents.end();) {
      throw_away(e->second);
      cache_drop(ino, e->first / kSlotBytes);
      e = n.extents.erase(e);
    }
    for (auto d = dirty_.lower_bound({ino, first_gone}); d != dirty_.end() && d->first.first == ino;)
      d = dirty_.erase(d);
    // A slot being written right now would be installed by that flush: an empty dirty slot
    // shadows it, and the next flush drops its groups.
    for (auto f = flushing_.lower_bound({ino, first_gone}); f != flushing_.end() && f->first.first == ino; ++f)
      dirty_[f->first] = std::make_shared<std::vector<uint8_t>>();
  }
  auto it = live_.inodes.find(ino);
  if (it == live_.inodes.end()) return;
  it->second.attr.size = size;
  it->second.attr.used = (size + 4095) / 4096 * 4096;
}

void IfsVolume::forget_file(uint64_t ino, IfsInode& n) {
  for (auto& [off, r] : n.extents) throw_away(r);
  n.extents.clear();
  for (auto d = dirty_.lower_bound({ino, 0}); d != dirty_.end() && d->first.first == ino;) d = dirty_.erase(d);
  for (auto c = cache_.lower_bound({ino, 0}); c != cache_.end() && c->first.first == ino;) {
    cache_order_.remove(c->first);
    c = cache_.erase(c);
  }
}

Status IfsVolume::read(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset, uint32_t count,
                       std::vector<uint8_t>* data, bool* eof, std::optional<fs::Attr>* attr) {
  std::unique_lock lk(mu_);
  IfsInode* n = find(id);
  if (!n) return Status::Stale;
  *attr = n->attr;
  if (n->attr.type == fs::FileType::Dir) return Status::IsDir;
  if (n->attr.type != fs::FileType::Reg) return Status::Inval;
  if (!allowed(ctx.cred, *n, fs::kWantRead)) return Status::Access;
  const uint64_t size = n->attr.size;
  if (offset >= size || count == 0) {
    data->clear();
    *eof = offset >= size;
    return Status::Ok;
  }
  const uint64_t end = std::min<uint64_t>(size, offset + count);
  data->assign(end - offset, 0);
  for (uint64_t k = offset / kSlotBytes; k * kSlotBytes < end; k++) {
    const SlotKey key{id.ino, k};
    const uint64_t lo = k * kSlotBytes;
    SlotBytes src;
    auto pick = [&]() -> SlotBytes {
      if (auto d = dirty_.find(key); d != dirty_.end()) return d->second;
      if (auto f = flushing_.find(key); f != flushing_.end()) return f->second;
      if (auto c = cache_.find(key); c != cache_.end()) {
        cache_order_.remove(key);
        cache_order_.push_front(key);
        return c->second;
      }
      return nullptr;
    };
    if (!(src = pick())) {
      auto loaded = std::make_shared<std::vector<uint8_t>>();
      if (!load_slot(lk, id.ino, k, loaded.get())) return find(id) ? Status::Io : Status::Stale;
      if (!(src = pick())) {
        cache_[key] = loaded;
        cache_order_.push_front(key);
        while (cache_order_.size() > kCacheSlots) {
          cache_.erase(cache_order_.back());
          cache_order_.pop_back();
        }
        src = loaded;
      }
    }
    const uint64_t from = std::max(offset, lo), to = std::min(end, lo + kSlotBytes);
    const uint64_t have_to = std::min<uint64_t>(to, lo + src->size());
    if (have_to > from)
      std::memcpy(data->data() + (from - offset), src->data() + (from - lo), have_to - from);
  }
  n = find(id);
  if (!n) return Status::Stale;
  *attr = n->attr;
  *eof = end >= n->attr.size;
  return Status::Ok;
}

Status IfsVolume::read_layout(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                              uint32_t count, ReadLayout* out) {
  *out = ReadLayout{};
  out->offset = offset;
  std::lock_guard lk(mu_);
  if (closed_ || abandoned_) return out->status = Status::Jukebox;
  IfsInode* n = find(id);
  if (!n) return out->status = Status::Stale;
  out->attr = n->attr;
  if (n->attr.type == fs::FileType::Dir) return out->status = Status::IsDir;
  if (n->attr.type != fs::FileType::Reg) return out->status = Status::Inval;
  if (!allowed(ctx.cred, *n, fs::kWantRead)) return out->status = Status::Access;
  const uint64_t size = n->attr.size;
  count = std::min(count, kMaxLayoutBytes);
  if (offset >= size || count == 0) {
    out->eof = offset >= size;
    return out->status = Status::Ok;
  }
  const uint64_t end = std::min<uint64_t>(size, offset + count);
  out->length = static_cast<uint32_t>(end - offset);
  out->eof = end >= size;
  for (uint64_t k = offset / kSlotBytes; k * kSlotBytes < end; k++) {
    const SlotKey key{id.ino, k};
    const uint64_t lo = k * kSlotBytes;
    const uint64_t from = std::max(offset, lo), to = std::min(end, lo + kSlotBytes);
    SlotBytes held;
    if (auto d = dirty_.find(key); d != dirty_.end()) held = d->second;
    else if (auto f = flushing_.find(key); f != flushing_.end()) held = f->second;
    if (held) {
      // Not striped yet (or being striped): the bytes themselves, zeros after them.
      const uint64_t have_to = std::min<uint64_t>(to, lo + held->size());
      if (have_to > from) {
        LayoutPiece p;
        p.offset = from;
        p.bytes.assign(held->begin() + static_cast<long>(from - lo), held->begin() + static_cast<long>(have_to - lo));
        out->pieces.push_back(std::move(p));
      }
      continue;
    }
    for (const GroupRecord& r : slot_records(*n, k))
      if (r.offset < to && from < r.offset + r.length) out->records.push_back(r);
  }
  if (out->pieces.size() > kMaxLayoutPieces || out->records.size() > kMaxLayoutRecords) {
    *out = ReadLayout{};
    return out->status = Status::Jukebox;  // the reader falls back to the forwarded READ
  }
  return out->status = Status::Ok;
}

Status IfsVolume::write(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                        std::span<const uint8_t> data, fs::Stability stable,
                        fs::Stability* committed, fs::Wcc* wcc) {
  std::unique_lock lk(mu_);
  IfsInode* n = find(id);
  if (!n) return Status::Stale;
  wcc->before = pre(*n);
  wcc->after = n->attr;
  if (n->attr.type == fs::FileType::Dir) return Status::IsDir;
  if (n->attr.type != fs::FileType::Reg) return Status::Inval;
  if (!allowed(ctx.cred, *n, fs::kWantWrite)) return Status::Access;
  const uint64_t cap = limits().max_file_size;
  if (offset > cap || data.size() > cap - offset) return Status::FBig;
  const uint64_t end = offset + data.size();
  for (uint64_t k = offset / kSlotBytes; k * kSlotBytes < end; k++) {
    const uint64_t lo = k * kSlotBytes;
    const uint64_t from = std::max(offset, lo), to = std::min(end, lo + kSlotBytes);
    n = find(id);
    if (!n) return Status::Stale;
    const uint64_t have = n->attr.size > lo ? std::min<uint64_t>(kSlotBytes, n->attr.size - lo) : 0;
    const bool need_old = !(from <= lo && to >= lo + have);
    SlotBytes buf = dirty_slot(lk, id.ino, k, need_old);
    if (!buf) return find(id) ? Status::Io : Status::Stale;
    if (buf->size() < to - lo) buf->resize(to - lo);
    std::memcpy(buf->data() + (from - lo), data.data() + (from - offset), to - from);
  }
  n = find(id);
  if (!n) return Status::Stale;
  if (end > n->attr.size) {
    n->attr.size = end;
    n->attr.used = (end + 4095) / 4096 * 4096;
  }
  // Writing clears setuid/setgid for anyone but root, as POSIX file systems do.
  if (ctx.cred.uid != 0) n->attr.mode &= ~(fs::kModeSetuid | fs::kModeSetgid);
  touch(*n, true);
  // The NVRAM journal above makes the record stable before the reply (stable writes).
  *committed = stable;
  wcc->after = n->attr;
  note_applied();
  return Status::Ok;
}

void IfsVolume::delete_garbage(uint64_t landed_snapshot) {
  std::vector<UnitRef> doomed;
  {
    std::lock_guard lock(mu_);
    auto keep = std::partition(garbage_.begin(), garbage_.end(),
                               [&](const Garbage& g) { return g.snapshot >= landed_snapshot; });
    for (auto it = keep; it != garbage_.end(); ++it)
      doomed.insert(doomed.end(), it->units.begin(), it->units.end());
    garbage_.erase(keep, garbage_.end());
  }
  // Best effort: a unit on a dead node stays as garbage there (left for an orphan sweep).
  for (const UnitRef& u : doomed) cluster_->units()->remove(u.place, u.key);
}

Status IfsVolume::flush(uint64_t* durable) {
  std::lock_guard flush_lock(flush_mu_);
  if (abandoned_) return Status::Jukebox;
  const Topology topology = cluster_->topology();
  struct SlotJob {
    SlotKey key;
    SlotBytes bytes;
    int64_t length = -1;  // bytes of the file in the slot; -1 when the file is gone
    uint32_t gen = 0;
    uint64_t first_version = 0;
    ProtectionPolicy policy;  // the file's (its nearest directory's, else the volume's)
    std::vector<GroupRecord> records;
    std::vector<uint8_t> padded;  // the slot's bytes zero-padded to length, when short
    const uint8_t* src() const { return padded.empty() ? bytes->data() : padded.data(); }
  };
  std::vector<SlotJob> jobs;
  IfsState snap;
  uint64_t my_snapshot = 0;
  {
    std::lock_guard lock(mu_);
    if (dirty_.empty() && !meta_changed_ && live_.applied_seq == durable_seq_.load() && generation_ > 0) {
      *durable = durable_seq_;
      return Status::Ok;
    }
    if (!dirty_.empty()) flush_floor_ = live_.next_version;
    for (auto& [key, bytes] : dirty_) {
      SlotJob j;
      j.key = key;
      j.bytes = bytes;
      flushing_[key] = bytes;
      auto it = live_.inodes.find(key.first);
      if (it != live_.inodes.end()) {
        const uint64_t lo = key.second * kSlotBytes, size = it->second.attr.size;
        j.length = size > lo ? static_cast<int64_t>(std::min<uint64_t>(kSlotBytes, size - lo)) : 0;
        j.gen = it->second.gen;
      }
      j.policy = effective_policy(live_, key.first, options_.policy).policy;
      j.first_version = client_version(live_.epoch, live_.next_version);
      live_.next_version += kSlotPlans * kVersionsPerPlan;
      jobs.push_back(std::move(j));
    }
    dirty_.clear();
    meta_changed_ = false;
    snap = live_;
    my_snapshot = ++snapshots_;
  }
  // Write behind: the slots as groups, a few at a time (each group's units in parallel).
  std::string error;
  std::mutex error_mu;
  bool ok = true;
  std::set<std::pair<uint32_t, uint32_t>> touched;
  // A group enters the catalog only with every unit landed: the catalog cannot say that a
  // unit is missing, so a group recorded with one would look fully protected while it is not,
  // and the loss of one more node would then take more units than parity covers (re-protect
  // finds it unrecoverable). A unit refused on a busy node (full unit pool, a call timed out)
  // is written again under the same key; a unit whose node or drive the topology has meanwhile
  // found dead makes the slot be planned again on today's topology, under fresh versions; when
  // neither helps, the slot fails and the flush with it (the records stay in NVRAM).
  auto write_slot = [&](SlotJob& j) -> bool {
    if (j.length <= 0) return true;
    std::string why;
    const uint64_t lo = j.key.second * kSlotBytes;
    if (j.bytes->size() < static_cast<uint64_t>(j.length)) {
      j.padded = *j.bytes;
      j.padded.resize(static_cast<size_t>(j.length), 0);
    }
    const uint8_t* src = j.src();
    Topology plan_on = topology;
    for (int attempt = 0; attempt < kSlotPlans && !abandoned_; attempt++) {
      if (attempt > 0) plan_on = cluster_->topology();
      if (!GroupIo::plan_extent(j.policy, plan_on, j.key.first, j.key.second,
                                j.first_version + uint64_t(attempt) * kVersionsPerPlan, lo,
                                static_cast<uint64_t>(j.length), &j.records, &why)) {
        j.records.clear();
        break;
      }
      bool landed = true;
      for (const GroupRecord& r : j.records) {
        const uint8_t* bytes = src + (r.offset - lo);
        std::vector<int> failed;
        if (!io_.write_group(r, bytes, &failed, &why, false) && failed.empty()) {
          landed = false;  // malformed: no retry helps
          break;
        }
        for (int retry = 1; !failed.empty() && retry <= kUnitRetries; retry++) {
          const Topology now = cluster_->topology();
          bool gone = false;
          for (int i : failed) gone = gone || !now.usable(r.places[size_t(i)].node, r.places[size_t(i)].drive);
          if (gone || abandoned_) break;  // planned again below, without the dead node or drive
          std::this_thread::sleep_for(retry_delay(retry));
          const std::vector<int> again = failed;
          io_.rewrite_units(r, bytes, again, &failed, &why, false);
        }
        if (!failed.empty()) {
          why = std::to_string(failed.size()) + " of " + std::to_string(r.shape.width()) +
                " units of group " + std::to_string(r.group) + " of file " +
                std::to_string(r.file) + " not written";
          landed = false;
          break;
        }
      }
      if (landed) return true;
      {
        std::lock_guard lock(mu_);  // never referenced: deleted after the next checkpoint
        for (const GroupRecord& r : j.records) throw_away(r, 0);
      }
      j.records.clear();
    }
    std::lock_guard l(error_mu);
    error = why;
    return false;
  };
  constexpr size_t kParallelSlots = 4;
  for (size_t i = 0; i < jobs.size() && ok; i += kParallelSlots) {
    std::vector<std::future<bool>> running;
    for (size_t k = i; k < std::min(jobs.size(), i + kParallelSlots); k++)
      running.push_back(std::async(std::launch::async, write_slot, std::ref(jobs[k])));
    for (auto& f : running) ok = f.get() && ok;
  }
  for (const SlotJob& j : jobs)
    for (const GroupRecord& r : j.records)
      for (const UnitPlace& p : r.places) touched.insert({p.node, p.drive});
  // Every drive written is synced before anything is recorded: until then a put answered Ok
  // may sit only in the drive's page cache. A failed sync may have lost the units it covered
  // (after a failed fsync the kernel may drop the dirty pages, so a second sync proving
  // nothing), so the units on that drive are put again, then synced again; a drive that keeps
  // failing, or that the topology finds failed or dead meanwhile, fails the flush exactly as a
  // unit that did not land: nothing is recorded, the slots stay dirty and the records in
  // NVRAM, and the next flush plans the slots again (without that drive once it is found
  // failed). A group landed on N drives is readable, but recorded it would look fully
  // protected while it is not.
  auto sync_touched = [&]() -> bool {
    std::vector<std::pair<uint32_t, uint32_t>> pending(touched.begin(), touched.end());
    for (int round = 0; round <= kUnitRetries && !pending.empty(); round++) {
      if (round > 0) {
        const Topology now = cluster_->topology();
        for (const auto& [node, drive] : pending)
          if (!now.usable(node, drive) || abandoned_) return false;
        std::this_thread::sleep_for(retry_delay(round));
        // Put again every unit the failed drives hold (the same keys, the same content).
        for (const SlotJob& j : jobs) {
          const uint64_t lo = j.key.second * kSlotBytes;
          for (const GroupRecord& r : j.records) {
            std::vector<int> which, failed;
            for (size_t i = 0; i < r.places.size(); i++)
              if (std::count(pending.begin(), pending.end(), std::pair<uint32_t, uint32_t>(r.places[i].node, r.places[i].drive)))
                which.push_back(int(i));
            std::string why;
            if (!which.empty() && !io_.rewrite_units(r, j.src() + (r.offset - lo), which, &failed, &why, false))
              util::log("ifs").warn("volume " + options_.name + ": " + why);
          }
        }
      }
      std::vector<std::future<UnitStatus>> syncs;
      for (const auto& [node, drive] : pending)
        syncs.push_back(std::async(std::launch::async, [this, node = node, drive = drive] {
          return cluster_->units()->sync(UnitPlace{node, drive});
        }));
      std::vector<std::pair<uint32_t, uint32_t>> still;
      for (size_t i = 0; i < syncs.size(); i++) {
        const UnitStatus st = syncs[i].get();
        if (st != UnitStatus::Ok) {
          still.push_back(pending[i]);
          std::lock_guard l(error_mu);
          error = std::string("sync of node ") + std::to_string(pending[i].first) + " drive " +
                  std::to_string(pending[i].second) + " failed: " + unit_status_name(st);
        }
      }
      pending = std::move(still);
    }
    return pending.empty();
  };
  if (ok && !sync_touched()) ok = false;
  if (!ok) {
    std::lock_guard lock(mu_);
    flush_floor_.reset();  // every unit written is in the garbage now
    for (SlotJob& j : jobs) {
      flushing_.erase(j.key);
      if (!dirty_.count(j.key)) dirty_[j.key] = j.bytes;  // written again by the next flush
      for (const GroupRecord& r : j.records) throw_away(r, 0);
    }
    util::log("ifs").error("volume " + options_.name + ": write-behind failed (" + error +
                           "); the records stay in NVRAM");
    return Status::Io;
  }
  // Install the new groups in the live catalog and in the snapshot about to be checkpointed.
  std::vector<uint8_t> image;
  {
    std::lock_guard lock(mu_);
    flush_floor_.reset();  // every unit written is recorded or in the garbage after this block
    for (SlotJob& j : jobs) {
      const uint64_t lo = j.key.second * kSlotBytes, hi = lo + kSlotBytes;
      flushing_.erase(j.key);
      cache_drop(j.key.first, j.key.second);
      auto replace = [&](IfsInode& n, bool live) {
        for (auto e = n.extents.lower_bound(lo); e != n.extents.end() && e->first < hi;) {
          // The checkpoint below no longer references the old groups.
          if (live) throw_away(e->second, my_snapshot - 1);
          e = n.extents.erase(e);
        }
        for (const GroupRecord& r : j.records) n.extents[r.offset] = r;
      };
      if (auto s = snap.inodes.find(j.key.first); s != snap.inodes.end() && s->second.gen == j.gen)
        replace(s->second, false);
      auto l = live_.inodes.find(j.key.first);
      if (l != live_.inodes.end() && l->second.gen == j.gen && lo < l->second.attr.size) {
        replace(l->second, true);
      } else {
        // Removed or truncated since the snapshot: the snapshot may still reference them.
        for (const GroupRecord& r : j.records) throw_away(r, my_snapshot);
      }
    }
    snap.generation = generation_ + 1;
    image = encode_state(snap);
  }
  if (!write_image(cluster_->units(), topology, cluster_->drives_per_node(), generation_ + 1,
                   generation_, image, &error)) {
    util::log("ifs").error("volume " + options_.name + ": checkpoint failed: " + error);
    return Status::Io;
  }
  ++generation_;
  durable_seq_ = std::max(durable_seq_.load(), snap.applied_seq);
  {
    std::lock_guard lock(mu_);
    live_.generation = generation_;
  }
  delete_garbage(my_snapshot);
  *durable = durable_seq_;
  return Status::Ok;
}

}  // namespace nasd::scaleout
