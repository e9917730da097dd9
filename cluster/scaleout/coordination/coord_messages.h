// The messages of the coordination protocol between nodes, and the client's calls and replies
// as the model sees them (COORDINATION.md). Every request is safe to repeat: the network of
// the simulation loses, duplicates and reorders them, and every sender repeats until answered.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/scaleout/coordination/coord_types.h"
#include "cluster/scaleout/coordination/fenced_store.h"

namespace nasd::scaleout::coord {

enum class OpKind : uint8_t { Create, Mkdir, Remove, Rmdir, Link, Rename, Write, Read };
const char* op_kind_name(OpKind k);

// A client call. Namespace calls and READ go to the coordinator of the directory (READ: of the
// file); a WRITE is handled where it arrives (the initiator).
struct ClientOp {
  uint64_t id = 0;  // unique per call; a retransmission repeats it
  OpKind kind = OpKind::Create;
  uint64_t dir = 0;     // Create, Mkdir, Remove, Rmdir, Link (target dir), Rename (from)
  std::string name;
  uint64_t ino = 0;     // Link (the file), Write, Read
  uint64_t dir2 = 0;    // Rename (to)
  std::string name2;
  uint32_t group = 0;   // Write, Read
};
// The slot whose coordinator runs `op` (a WRITE: the file's, for its token).
Slot op_slot(const ClientOp& op);

enum class OpStatus : int { Ok = 0, Retry = 1, Error = 2 };
struct ClientReply {
  uint64_t id = 0;
  OpStatus status = OpStatus::Retry;
  uint64_t ino = 0;     // Create, Mkdir: the new inode
  Version version;      // Write: the version written; Read: the version read
  NodeId hint = 0;      // Retry: the node believed to coordinate the slot
};

struct Msg {
  enum class Kind : uint8_t {
    Heartbeat,     // slots: the slots `from` serves
    // storage (served by serve_storage on the receiving node)
    Open, OpenReply,              // slot, epoch -> ok, recs
    Put, PutReply,                // slot, epoch, recs -> ok
    UnitPut, UnitReply,           // slot, epoch, unit -> ok
    MirrorAppend, MirrorReply,    // jrec -> ok (jrec.seq)
    ReadJournal, JournalReply,    // origin, slot, stamp (close below) -> jrecs
    // namespace transactions
    Prepare, Vote,                // tx, slot (participant), manager, part -> ok (yes)
    Decide, Decided,              // tx, slot (participant), commit -> done
    Query,                        // tx, slot (participant), manager: answered by Decide
    // byte-range tokens and group versions
    TokenRequest, Grant,          // file, group -> stamp
    Revoke, Released,             // file, group, stamp -> ok (false: the holder lost it)
    Record, Recorded,             // file, group, version, stamp -> ok
    Lookup, LookedUp,             // slot, file (directory), name -> ok, file (0: absent)
  };
  Kind kind = Kind::Heartbeat;
  NodeId from = 0, to = 0;
  uint64_t request = 0;
  Slot slot = 0;
  uint64_t epoch = 0;
  bool ok = false;
  std::vector<Rec> recs;
  UnitId unit;
  JournalRec jrec;
  std::vector<JournalRec> jrecs;
  NodeId origin = 0;
  Stamp stamp;
  uint64_t tx = 0;
  Slot manager = 0;
  Part part;
  bool commit = false;
  bool writes_only = false;  // ReadJournal of a forced revocation
  uint64_t incarnation = 0;  // TokenRequest: the requester's
  std::string name;          // Lookup
  uint64_t file = 0;
  uint32_t group = 0;
  Version version;
  std::vector<std::pair<Slot, uint64_t>> slots;
};
const char* msg_kind_name(Msg::Kind k);
// A message of `kind` back to `m`'s sender about the same thing: its request, slot, epoch,
// transaction, manager, file, group, version and stamp.
Msg answer(const Msg& m, Msg::Kind kind);

// One node's durable state: its store and the mirrors of the origins it covers.
struct NodeStorage {
  FencedStore store;
  std::map<NodeId, MirrorLog> mirrors;  // by origin
};
// Answers a storage message (Open, Put, UnitPut, MirrorAppend, ReadJournal) against the
// receiving node's storage; false for any other kind.
bool serve_storage(const Msg& m, NodeStorage& storage, Msg* reply);

}  // namespace nasd::scaleout::coord
