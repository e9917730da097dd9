// A deterministic simulation of NLM's recovery protocol around the lock manager: clients lock
// and unlock byte ranges, the server crashes (its locks vanish, a grace period begins and the
// clients are told after a random delay, sometimes too late), clients reboot (their status
// monitor's SM_NOTIFY frees what they held), unlocks are lost. After every step, what the
// clients believe they hold never conflicts: two clients never both think they own
// overlapping ranges when either is exclusive. And a client's belief is backed by the server
// except while it waits to reclaim.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <vector>

#include "server/nlm/lock_manager.h"

namespace nasd::nlm {
namespace {

constexpr int kClients = 4, kFiles = 2, kBytes = 24;
constexpr uint64_t kGraceMs = 500;

struct Belief {
  int file;
  uint64_t start, end;
  bool exclusive;
};

struct Client {
  LockOwner owner;
  std::vector<Belief> held;  // granted ranges, as the client's lock table records them
  std::optional<uint64_t> notify_at;  // when the server's SM_NOTIFY reaches it
  // Its notice came after the grace period. Until it holds nothing (or reboots), what it
  // believes may be stale, and NLM cannot tell it: its late reclaims are refused, but a later
  // restart's reclaim of a lock it lost meanwhile would succeed.
  bool at_risk = false;
};

FileId file_id(int f) { return FileId{1, static_cast<uint64_t>(100 + f), 1}; }

bool conflict(const Belief& a, const Belief& b) {
  return a.file == b.file && a.start < b.end && b.start < a.end && (a.exclusive || b.exclusive);
}

// The client's table after unlocking [start, end) of `file` (POSIX: the rest stays held).
void drop_range(std::vector<Belief>* held, int file, uint64_t start, uint64_t end) {
  std::vector<Belief> out;
  for (const Belief& b : *held) {
    if (b.file != file || b.end <= start || end <= b.start) {
      out.push_back(b);
      continue;
    }
    if (b.start < start) out.push_back({b.file, b.start, start, b.exclusive});
    if (end < b.end) out.push_back({b.file, end, b.end, b.exclusive});
  }
  *held = std::move(out);
}

void run(uint32_t seed) {
  std::mt19937 rng(seed);
  auto chance = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
  std::vector<Client> clients(kClients);
  for (int i = 0; i < kClients; i++) clients[i].owner = LockOwner{"host" + std::to_string(i), 1, "oh", "10.0.1." + std::to_string(i)};
  auto server = std::make_unique<LockManager>();
  uint64_t now = 0;
  uint64_t grace_end = 0;
  int crashes = 0, reclaims = 0, lost = 0, late = 0;

  for (int step = 0; step < 3000; step++) {
    now += rng() % 40;
    Client& c = clients[rng() % kClients];
    int action = rng() % 100;
    if (action < 45) {  // LOCK (new) — or RECLAIM of one belief if notified
      int f = rng() % kFiles;
      uint64_t start = rng() % kBytes, len = 1 + rng() % 6;
      bool excl = chance(50);
      LockRequest r;
      r.lock = Lock{file_id(f), c.owner, excl, ByteRange::from_nlm(start, len)};
      LockStatus st = server->lock(r, now);
      if (st == LockStatus::Granted) {
        // The client's table takes the new range over what it held there (POSIX semantics).
        drop_range(&c.held, f, r.lock.range.start, r.lock.range.end);
        c.held.push_back({f, r.lock.range.start, r.lock.range.end, excl});
      }
    } else if (action < 70) {  // UNLOCK, sometimes lost on the way (the server keeps the lock)
      int f = rng() % kFiles;
      uint64_t start = rng() % kBytes, len = 1 + rng() % 8;
      auto range = ByteRange::from_nlm(start, len);
      drop_range(&c.held, f, range.start, range.end);
      if (chance(10)) {
        lost++;
      } else {
        server->unlock(file_id(f), c.owner, range);
      }
    } else if (action < 73) {  // the server crashes and restarts: locks gone, grace, notify later
      crashes++;
      server = std::make_unique<LockManager>();
      server->begin_grace(now + kGraceMs);
      grace_end = now + kGraceMs;
      for (Client& k : clients)
        if (!k.held.empty()) k.notify_at = now + rng() % (kGraceMs * 5 / 4);  // sometimes late
    } else if (action < 75) {  // the client reboots: its statd's SM_NOTIFY frees everything
      c.held.clear();
      c.notify_at.reset();
      c.at_risk = false;
      server->free_all(ClientKey{c.owner.address, c.owner.host});
    }
    // Deliver due notifications: the client reclaims every lock it believes it holds. A
    // reclaim refused (too late: the grace period is over and another client took the range)
    // means the lock is lost, and the client drops it (Linux signals the process).
    for (Client& k : clients) {
      if (!k.notify_at || *k.notify_at > now) continue;
      k.notify_at.reset();
      std::vector<Belief> kept;
      for (const Belief& b : k.held) {
        LockRequest r;
        r.lock = Lock{file_id(b.file), k.owner, b.exclusive, ByteRange{b.start, b.end}};
        r.reclaim = true;
        LockStatus st = server->lock(r, now);
        if (st == LockStatus::Granted) {
          kept.push_back(b);
          reclaims++;
        } else if (st == LockStatus::DeniedGrace) {
          late++;  // after the grace period: refused, the lock is lost
        }
      }
      k.held = std::move(kept);
    }

    // Safety: no two clients' beliefs conflict. The exception NLM has: a client whose SM_NOTIFY
    // arrives after the grace period may have lost its locks to whoever asked after the grace
    // ended (NLM's premise is that the server retries SM_NOTIFY until it is answered, within
    // the grace period). Within the grace period even a client still waiting to reclaim is safe.
    for (Client& k : clients) {
      if (k.notify_at && now >= grace_end) k.at_risk = true;
      if (k.held.empty()) k.at_risk = false;
    }
    for (int i = 0; i < kClients; i++)
      for (int j = i + 1; j < kClients; j++) {
        if (clients[i].at_risk || clients[j].at_risk) continue;
        for (const Belief& a : clients[i].held)
          for (const Belief& b : clients[j].held)
            ASSERT_FALSE(conflict(a, b)) << "seed " << seed << " step " << step << ": host" << i
                                         << " and host" << j << " both hold file " << a.file;
      }
    // Every belief of a client that is not waiting to reclaim (nor at risk) is backed by a
    // server lock: any other owner's conflicting request is refused.
    for (const Client& k : clients) {
      if (k.notify_at || k.at_risk) continue;
      for (const Belief& b : k.held) {
        LockOwner other{"probe", 0, "", "10.0.2.1"};
        std::optional<Lock> held_by;
        LockStatus st = server->test(Lock{file_id(b.file), other, true, ByteRange{b.start, b.end}},
                                     now + kGraceMs * 10, &held_by);
        ASSERT_EQ(st, LockStatus::Denied) << "seed " << seed << " step " << step
                                          << ": a belief of " << k.owner.host << " is not held";
      }
    }
  }
  EXPECT_GT(crashes, 0);
  EXPECT_GT(reclaims, 0);
  EXPECT_GT(lost, 0);
  EXPECT_GT(late, 0);
}

TEST(LockRecoverySimulation, ClientsNeverHoldConflictingLocks) {
  for (uint32_t seed = 1; seed <= 40; seed++) run(seed);
}

}  // namespace
}  // namespace nasd::nlm
