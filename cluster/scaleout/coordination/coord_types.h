// The vocabulary of the scale-out coordination protocol (COORDINATION.md): slots and how an
// inode names its slot, stamps and epochs, which node a slot is designated to, and the
// after-image records that the journals carry and the metadata stores keep. Pure data.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace nasd::scaleout::coord {

using NodeId = uint32_t;  // a primary; 0 is "none"
using Slot = uint32_t;

// An inode number carries its slot in the top bits and, below it, the slot of the coordinator
// that allocated it and that coordinator's counter: unique without asking anybody.
constexpr int kSlotShift = 48;
constexpr int kAllocatorShift = 36;
constexpr uint64_t kRootIno = 1;  // slot 0
inline Slot slot_of(uint64_t ino) { return static_cast<Slot>(ino >> kSlotShift); }
inline uint64_t make_ino(Slot slot, Slot allocator, uint64_t counter) {
  return (uint64_t(slot) << kSlotShift) | (uint64_t(allocator & 0xfff) << kAllocatorShift) |
         (counter & ((1ull << kAllocatorShift) - 1));
}
// A new directory's slot: spread by its parent, name and the allocator's counter.
Slot directory_slot(uint64_t parent, const std::string& name, uint64_t counter, uint32_t slots);
// The node a slot is designated to among `alive` (rendezvous hashing: a node's loss moves only
// its own slots, each to the next node of that slot's order). 0 when `alive` is empty.
NodeId designated(Slot slot, const std::vector<NodeId>& alive);
uint64_t mix64(uint64_t x);

// (slot epoch, grant within the epoch): 0 for a coordinator's own records, the token's grant
// number for an initiator's writes under a byte-range token.
struct Stamp {
  uint64_t epoch = 0;
  uint64_t grant = 0;
  auto tie() const { return std::tie(epoch, grant); }
  bool operator<(const Stamp& o) const { return tie() < o.tie(); }
  bool operator==(const Stamp& o) const { return tie() == o.tie(); }
};

// A group's content, modelled as a version: unique and ordered (the token's stamp, then a
// counter of the holder), plus the client operation that wrote it (what the checks compare).
struct Version {
  Stamp stamp;
  uint64_t n = 0;
  uint64_t op = 0;
  auto tie() const { return std::tie(stamp, n); }
  bool operator<(const Version& o) const { return tie() < o.tie(); }
  bool operator==(const Version& o) const { return tie() == o.tie() && op == o.op; }
  bool empty() const { return n == 0; }
};

// ---- records: one key's after-image ----

enum class KeyKind : uint8_t {
  Head = 1,   // the slot's head: which journal holds its tail; the allocation counter
  Inode = 2,  // a = ino
  Entry = 3,  // a = directory ino, name
  Group = 4,  // a = file ino, b = group index: the recorded version
  Token = 5,  // a = file ino, b = group index: the write token out on it
  Tx = 6,     // a = transaction id
  Done = 7,   // a = client operation id: its reply (the journaled reply cache)
};

struct Key {
  Key() = default;
  Key(KeyKind k, uint64_t a_ = 0, uint64_t b_ = 0, std::string n = {})
      : kind(k), a(a_), b(b_), name(std::move(n)) {}
  KeyKind kind = KeyKind::Head;
  uint64_t a = 0;
  uint64_t b = 0;
  std::string name;
  auto tie() const { return std::tie(kind, a, b, name); }
  bool operator<(const Key& o) const { return tie() < o.tie(); }
  bool operator==(const Key& o) const { return tie() == o.tie(); }
};

// One change a transaction makes at one slot (checked at prepare, applied at commit).
struct Change {
  enum class Kind : uint8_t {
    AddEntry,    // dir, name -> ino (is_dir): dir a live directory, and the name absent or,
                 // with `replaces`, naming that file (a RENAME onto it)
    DelEntry,    // dir, name: must name ino
    NewInode,    // ino (is_dir, parent = dir): must be absent
    AdjustLinks, // ino (a file) += delta; at 0 the inode goes
    DelDir,      // ino: a live, empty directory, goes
    SetParent,   // ino (a directory) moves under dir
    KeepParent,  // ino (a directory) must still be under dir, and stays so until the outcome
  };
  Kind kind = Kind::AddEntry;
  uint64_t dir = 0;
  std::string name;
  uint64_t ino = 0;
  bool is_dir = false;
  int delta = 0;
  uint64_t replaces = 0;
};

struct Part {
  Slot slot = 0;
  std::vector<Change> changes;
};

enum class TxState : uint8_t { Begun = 1, Prepared = 2, Committed = 3, Aborted = 4 };

struct Value {
  bool live = false;  // false: a tombstone
  // Inode
  bool is_dir = false;
  uint32_t nlink = 0;
  uint64_t parent = 0;
  // Entry
  uint64_t child = 0;
  bool child_dir = false;
  // Group
  Version version;
  // Token
  NodeId holder = 0;
  uint64_t holder_incarnation = 0;  // a restarted holder does not hold its earlier tokens
  Stamp stamp;
  // Head
  NodeId journal = 0;
  uint64_t counter = 0;
  // Tx (the manager keeps every part; a participant its own) and Done (the reply)
  TxState tx = TxState::Begun;
  Slot manager = 0;
  std::vector<Part> parts;
  uint64_t op = 0;
  int status = 0;
  uint64_t result = 0;
};

// Ordered by who wrote it: a newer epoch wins, then the later journal position.
struct Rec {
  Key key;
  Stamp stamp;
  uint64_t seq = 0;
  Value value;
  auto order() const { return std::tie(stamp.epoch, seq); }
};

using Records = std::map<Key, Rec>;

// One record of a node's NVRAM journal (and of its mirror at the node's cover). A coordinator's
// record holds after-images of its slot's keys under stamp (epoch, 0); an initiator's holds a
// WRITE of one group under its token's stamp.
struct JournalRec {
  NodeId origin = 0;
  uint64_t seq = 0;  // per origin, growing across its restarts
  Slot slot = 0;
  Stamp stamp;
  std::vector<Rec> after;  // coordinator records
  bool write = false;      // initiator records:
  uint64_t file = 0;
  uint32_t group = 0;
  Version version;
};
// Keeps `r` in `into` if it is newer than what is there. True when it changed `into`.
bool merge(Records& into, const Rec& r);

}  // namespace nasd::scaleout::coord
