#include "cluster/scaleout/group_io.h"

#include <algorithm>
#include <cstring>
#include <thread>

namespace nasd::scaleout {
namespace {

// Runs fn(i) for i in [0, n) on one thread each (the units of a group live on different
// nodes and drives, so their calls overlap).
template <typename Fn>
void parallel_for(size_t n, Fn fn) {
  if (n <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::vector<std::thread> threads;
  threads.reserve(n - 1);
  for (size_t i = 1; i < n; ++i) threads.emplace_back([&fn, i] { fn(i); });
  fn(0);
  for (std::thread& t : threads) t.join();
}

}  // namespace

// ---- LocalUnits ----

void LocalUnits::add(NodeUnits* node) {
  std::lock_guard<std::mutex> lock(mu_);
  nodes_[node->node()] = node;
}

void LocalUnits::set_down(uint32_t node, bool down) {
  std::lock_guard<std::mutex> lock(mu_);
  down_[node] = down;
}

NodeUnits* LocalUnits::find(uint32_t node) {
  std::lock_guard<std::mutex> lock(mu_);
  if (down_[node]) return nullptr;
  auto it = nodes_.find(node);
  return it == nodes_.end() ? nullptr : it->second;
}

UnitStatus LocalUnits::put(const UnitPlace& at, const UnitKey& key, const uint8_t* data,
                           uint32_t len) {
  NodeUnits* n = find(at.node);
  return n ? n->put(at.drive, key, data, len) : UnitStatus::Unreachable;
}

UnitStatus LocalUnits::get(const UnitPlace& at, const UnitKey& key, std::vector<uint8_t>* out) {
  NodeUnits* n = find(at.node);
  return n ? n->get(at.drive, key, out) : UnitStatus::Unreachable;
}

UnitStatus LocalUnits::remove(const UnitPlace& at, const UnitKey& key) {
  NodeUnits* n = find(at.node);
  return n ? n->remove(at.drive, key) : UnitStatus::Unreachable;
}

UnitStatus LocalUnits::sync(const UnitPlace& at) {
  NodeUnits* n = find(at.node);
  return n ? n->sync(at.drive) : UnitStatus::Unreachable;
}

UnitStatus LocalUnits::list(const UnitPlace& at, const UnitKey& from, uint32_t max,
                            std::vector<UnitKey>* out, bool* more) {
  out->clear();
  *more = false;
  NodeUnits* n = find(at.node);
  return n ? n->list(at.drive, from, max, out, more) : UnitStatus::Unreachable;
}

// ---- GroupIo ----

std::shared_ptr<const ErasureCodec> GroupIo::codec(int n, int m) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& c = codecs_[{n, m}];
  if (!c) c = std::make_shared<const ErasureCodec>(n, m);
  return c;
}

bool GroupIo::plan(const ProtectionPolicy& policy, const Topology& topology, uint64_t file,
                   uint64_t group, uint64_t version, uint64_t bytes, GroupRecord* out,
                   std::string* error) {
  if (bytes == 0) {
    *error = "a group holds at least one byte";
    return false;
  }
  GroupRecord r;
  r.file = file;
  r.group = group;
  r.version = version;
  r.length = bytes;
  if (!data_shape(policy, topology, bytes, &r.shape, error)) return false;
  if (bytes > static_cast<uint64_t>(r.shape.data) * kStripeUnit) {
    *error = "group of " + std::to_string(bytes) + " bytes exceeds its " +
             std::to_string(r.shape.data) + " data units";
    return false;
  }
  if (!place_group(r.shape, topology, file, group, &r.places, error)) return false;
  *out = std::move(r);
  return true;
}

bool GroupIo::plan_extent(const ProtectionPolicy& policy, const Topology& topology,
                          uint64_t file, uint64_t group, uint64_t first_version, uint64_t offset,
                          uint64_t bytes, std::vector<GroupRecord>* out, std::string* error) {
  out->clear();
  uint64_t done = 0;
  uint64_t version = first_version;
  while (done < bytes) {
    GroupShape widest;
    if (!data_shape(policy, topology, bytes - done, &widest, error)) return false;
    const uint64_t take =
        std::min<uint64_t>(bytes - done, static_cast<uint64_t>(widest.data) * kStripeUnit);
    GroupRecord r;
    if (!plan(policy, topology, file, group, version++, take, &r, error)) return false;
    r.offset = offset + done;
    out->push_back(std::move(r));
    done += take;
  }
  return true;
}

bool GroupIo::encode_units(const GroupRecord& r, const uint8_t* data,
                           std::vector<std::vector<uint8_t>>* units, std::string* error) {
  const int n = r.shape.data, m = r.shape.parity;
  const uint32_t ub = r.unit_bytes();
  if (r.length == 0 || r.length > static_cast<uint64_t>(n) * kStripeUnit ||
      static_cast<int>(r.places.size()) != n + m) {
    *error = "malformed group record";
    return false;
  }
  units->assign(n + m, std::vector<uint8_t>(ub, 0));
  for (int i = 0; i < n; ++i) {
    const uint64_t from = static_cast<uint64_t>(i) * ub;
    if (from < r.length) {
      std::memcpy((*units)[i].data(), data + from, std::min<uint64_t>(ub, r.length - from));
    }
  }
  std::vector<const uint8_t*> dp(n);
  std::vector<uint8_t*> pp(m);
  for (int i = 0; i < n; ++i) dp[i] = (*units)[i].data();
  for (int i = 0; i < m; ++i) pp[i] = (*units)[n + i].data();
  codec(n, m)->encode(ub, dp.data(), pp.data());
  return true;
}

bool GroupIo::put_units(const GroupRecord& r, const uint8_t* data, const std::vector<int>& which,
                        std::vector<int>* failed, std::string* error, bool sync) {
  std::vector<std::vector<uint8_t>> units;
  failed->clear();
  if (!encode_units(r, data, &units, error)) return false;
  const uint32_t ub = r.unit_bytes();
  std::vector<UnitStatus> st(which.size());
  parallel_for(which.size(), [&](size_t k) {
    const int i = which[k];
    st[k] = units_->put(r.places[i], r.key(i), units[i].data(), ub);
    if (st[k] == UnitStatus::Ok && sync) st[k] = units_->sync(r.places[i]);
  });
  for (size_t k = 0; k < which.size(); ++k) {
    if (st[k] != UnitStatus::Ok) failed->push_back(which[k]);
  }
  return true;
}

bool GroupIo::write_group(const GroupRecord& r, const uint8_t* data, std::vector<int>* failed,
                          std::string* error, bool sync) {
  std::vector<int> all(r.places.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  if (!put_units(r, data, all, failed, error, sync)) return false;
  if (static_cast<int>(failed->size()) > r.shape.parity) {
    *error = std::to_string(failed->size()) + " of " + std::to_string(r.shape.width()) +
             " units failed to write";
    return false;
  }
  return true;
}

bool GroupIo::rewrite_units(const GroupRecord& r, const uint8_t* data,
                            const std::vector<int>& which, std::vector<int>* failed,
                            std::string* error, bool sync) {
  for (int i : which) {
    if (i < 0 || i >= static_cast<int>(r.places.size())) {
      *error = "no unit " + std::to_string(i) + " in the group";
      return false;
    }
  }
  if (!put_units(r, data, which, failed, error, sync)) return false;
  if (!failed->empty()) {
    *error = std::to_string(failed->size()) + " of " + std::to_string(which.size()) +
             " units failed to write again";
    return false;
  }
  return true;
}

void GroupIo::read_units(const GroupRecord& r, const std::vector<int>& which,
                         std::vector<std::vector<uint8_t>>* bufs, std::vector<UnitStatus>* st) {
  const uint32_t ub = r.unit_bytes();
  parallel_for(which.size(), [&](size_t k) {
    const int i = which[k];
    UnitStatus s = units_->get(r.places[i], r.key(i), &(*bufs)[i]);
    if (s == UnitStatus::Ok && (*bufs)[i].size() != ub) s = UnitStatus::Corrupt;
    (*st)[i] = s;
  });
}

bool GroupIo::read_group(const GroupRecord& r, std::vector<uint8_t>* out, GroupHealth* health,
                         std::string* error) {
  const int n = r.shape.data, m = r.shape.parity;
  const uint32_t ub = r.unit_bytes();
  std::vector<std::vector<uint8_t>> bufs(n + m);
  std::vector<UnitStatus> st(n + m, UnitStatus::NotFound);
  std::vector<int> first;
  for (int i = 0; i < n; ++i) first.push_back(i);
  read_units(r, first, &bufs, &st);
  std::vector<bool> asked(n + m, false);
  for (int i = 0; i < n; ++i) asked[i] = true;
  std::vector<int> bad;
  for (int i = 0; i < n; ++i) {
    if (st[i] != UnitStatus::Ok) bad.push_back(i);
  }
  if (!bad.empty()) {
    // Degraded: read just enough parity to cover the bad data units, more if those fail too.
    int next = n;
    while (next < n + m) {
      int ok_parity = 0;
      for (int i = n; i < next; ++i) ok_parity += st[i] == UnitStatus::Ok ? 1 : 0;
      const int need = static_cast<int>(bad.size()) - ok_parity;
      if (need <= 0) break;
      std::vector<int> more;
      for (int i = next; i < n + m && static_cast<int>(more.size()) < need; ++i) more.push_back(i);
      next += static_cast<int>(more.size());
      for (int i : more) asked[i] = true;
      read_units(r, more, &bufs, &st);
    }
  }
  GroupHealth h;
  for (int i = 0; i < n + m; ++i) {
    if (!asked[i]) continue;
    if (st[i] != UnitStatus::Ok) {
      h.unreadable.push_back(i);
      if (st[i] == UnitStatus::Corrupt) h.corrupt.push_back(i);
    }
  }
  if (!bad.empty()) {
    std::vector<int> missing;
    std::vector<uint8_t*> ptrs(n + m);
    for (int i = 0; i < n + m; ++i) {
      if (st[i] != UnitStatus::Ok) {
        bufs[i].assign(ub, 0);
        missing.push_back(i);
      }
      ptrs[i] = bufs[i].data();
    }
    if (static_cast<int>(missing.size()) > m ||
        !codec(n, m)->reconstruct(ub, ptrs.data(), missing, error)) {
      h.readable = false;
      if (health) *health = h;
      if (error->empty()) {
        *error = "group " + std::to_string(r.group) + " of file " + std::to_string(r.file) +
                 ": " + std::to_string(bad.size()) + " data units lost, parity exhausted";
      }
      return false;
    }
  }
  out->resize(r.length);
  for (int i = 0; i < n; ++i) {
    const uint64_t from = static_cast<uint64_t>(i) * ub;
    if (from >= r.length) break;
    std::memcpy(out->data() + from, bufs[i].data(), std::min<uint64_t>(ub, r.length - from));
  }
  if (health) *health = h;
  return true;
}

GroupHealth GroupIo::verify_group(const GroupRecord& r) {
  const int n = r.shape.data, m = r.shape.parity;
  const uint32_t ub = r.unit_bytes();
  std::vector<std::vector<uint8_t>> bufs(n + m);
  std::vector<UnitStatus> st(n + m);
  std::vector<int> all;
  for (int i = 0; i < n + m; ++i) all.push_back(i);
  read_units(r, all, &bufs, &st);
  GroupHealth h;
  for (int i = 0; i < n + m; ++i) {
    if (st[i] != UnitStatus::Ok) h.unreadable.push_back(i);
    if (st[i] == UnitStatus::Corrupt) h.corrupt.push_back(i);
  }
  h.readable = static_cast<int>(h.unreadable.size()) <= m;
  bool data_ok = true;
  for (int i = 0; i < n; ++i) data_ok = data_ok && st[i] == UnitStatus::Ok;
  if (data_ok && m > 0) {
    std::vector<std::vector<uint8_t>> parity(m, std::vector<uint8_t>(ub));
    std::vector<const uint8_t*> dp(n);
    std::vector<uint8_t*> pp(m);
    for (int i = 0; i < n; ++i) dp[i] = bufs[i].data();
    for (int i = 0; i < m; ++i) pp[i] = parity[i].data();
    codec(n, m)->encode(ub, dp.data(), pp.data());
    for (int i = 0; i < m; ++i) {
      if (st[n + i] == UnitStatus::Ok && bufs[n + i] != parity[i]) h.bad_parity.push_back(n + i);
    }
  }
  return h;
}

bool GroupIo::repair_group(const GroupRecord& r, const ProtectionPolicy& policy,
                           const Topology& topology, uint64_t new_version,
                           std::vector<GroupRecord>* replacement, int* rebuilt,
                           std::string* error) {
  const int n = r.shape.data, m = r.shape.parity;
  const uint32_t ub = r.unit_bytes();
  *rebuilt = 0;
  std::vector<std::vector<uint8_t>> bufs(n + m);
  std::vector<UnitStatus> st(n + m);
  std::vector<int> all;
  for (int i = 0; i < n + m; ++i) all.push_back(i);
  read_units(r, all, &bufs, &st);
  std::vector<int> missing, moved;
  std::vector<uint8_t*> ptrs(n + m);
  for (int i = 0; i < n + m; ++i) {
    // A unit is rewritten when unreadable, or when it sits on a dead node or failed drive
    // (even if still answering: the topology says it is going away).
    const bool gone = !topology.usable(r.places[i].node, r.places[i].drive);
    if (st[i] != UnitStatus::Ok) {
      bufs[i].assign(ub, 0);
      missing.push_back(i);
    }
    if (gone) moved.push_back(i);
    ptrs[i] = bufs[i].data();
  }
  GroupRecord out = r;
  replacement->clear();
  if (missing.empty() && moved.empty()) {
    replacement->push_back(out);
    return true;
  }
  if (static_cast<int>(missing.size()) > m) {
    *error = std::to_string(missing.size()) + " units lost, parity covers " + std::to_string(m);
    return false;
  }
  if (!codec(n, m)->reconstruct(ub, ptrs.data(), missing, error)) return false;
  if (!moved.empty() &&
      !replace_units(r.shape, topology, r.places, moved, r.file, r.group, &out.places, error)) {
    // The survivors cannot hold this width at its protection: re-stripe the bytes narrower.
    std::vector<uint8_t> bytes(r.length);
    for (int i = 0; i < n; ++i) {
      const uint64_t from = static_cast<uint64_t>(i) * ub;
      if (from >= r.length) break;
      std::memcpy(bytes.data() + from, bufs[i].data(), std::min<uint64_t>(ub, r.length - from));
    }
    std::vector<GroupRecord> pieces;
    error->clear();
    if (!plan_extent(policy, topology, r.file, r.group, new_version, r.offset, r.length,
                     &pieces, error)) {
      return false;
    }
    for (GroupRecord& piece : pieces) {
      std::vector<int> failed;
      if (!write_group(piece, bytes.data() + (piece.offset - r.offset), &failed, error) ||
          !failed.empty()) {
        if (error->empty()) error->assign("re-striped unit not written");
        for (GroupRecord& undo : pieces) delete_group(undo);
        return false;
      }
      *rebuilt += piece.shape.width();
    }
    // The old units stay until the coordinator commits the replacement (protection_job.h):
    // a stale repair must never delete units the metadata still points at.
    *replacement = std::move(pieces);
    return true;
  }
  std::vector<int> rewrite = missing;
  for (int i : moved) {
    if (std::find(rewrite.begin(), rewrite.end(), i) == rewrite.end()) rewrite.push_back(i);
  }
  std::vector<UnitStatus> wst(rewrite.size());
  parallel_for(rewrite.size(), [&](size_t k) {
    const int i = rewrite[k];
    wst[k] = units_->put(out.places[i], out.key(i), bufs[i].data(), ub);
    if (wst[k] == UnitStatus::Ok) wst[k] = units_->sync(out.places[i]);
  });
  for (size_t k = 0; k < rewrite.size(); ++k) {
    if (wst[k] != UnitStatus::Ok) {
      *error = "rebuilt unit " + std::to_string(rewrite[k]) + " not written: " +
               unit_status_name(wst[k]);
      return false;
    }
    ++*rebuilt;
  }
  replacement->push_back(std::move(out));
  return true;
}

bool GroupIo::rebalance_group(const GroupRecord& r, const Topology& topology,
                              uint64_t new_version, std::vector<GroupRecord>* replacement,
                              int* written, std::string* error) {
  *written = 0;
  replacement->clear();
  GroupRecord out = r;
  if (rebalance_units(r.shape, topology, r.places, r.file, r.group, &out.places).empty()) {
    replacement->push_back(r);  // balanced already (or re-protect's to fix first)
    return true;
  }
  std::vector<uint8_t> bytes;
  if (!read_group(r, &bytes, nullptr, error)) return false;
  out.version = new_version;
  std::vector<int> failed;
  if (!write_group(out, bytes.data(), &failed, error) || !failed.empty()) {
    if (error->empty()) error->assign("rebalanced unit not written");
    delete_group(out);
    return false;
  }
  *written = out.shape.width();
  replacement->push_back(std::move(out));
  return true;
}

bool GroupIo::restripe_group(const GroupRecord& r, const ProtectionPolicy& policy,
                             const Topology& topology, uint64_t new_version,
                             std::vector<GroupRecord>* replacement, int* written,
                             std::string* error) {
  *written = 0;
  replacement->clear();
  std::vector<uint8_t> bytes;
  if (!read_group(r, &bytes, nullptr, error)) return false;
  std::vector<GroupRecord> pieces;
  if (!plan_extent(policy, topology, r.file, r.group, new_version, r.offset, r.length, &pieces,
                   error)) {
    return false;
  }
  for (const GroupRecord& piece : pieces) {
    std::vector<int> failed;
    if (!write_group(piece, bytes.data() + (piece.offset - r.offset), &failed, error) ||
        !failed.empty()) {
      if (error->empty()) error->assign("re-striped unit not written");
      for (const GroupRecord& undo : pieces) delete_group(undo);
      return false;
    }
    *written += piece.shape.width();
  }
  *replacement = std::move(pieces);  // the old units stay until the caller commits
  return true;
}

void GroupIo::delete_group(const GroupRecord& r) {
  parallel_for(r.places.size(), [&](size_t i) {
    units_->remove(r.places[i], r.key(static_cast<int>(i)));
  });
}

}  // namespace nasd::scaleout
