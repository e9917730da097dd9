// fs::CallIdentity: which client call a volume mutation answers, so that the reply cache can
// move with the data (issue 10). It names the call the way the RPC duplicate request cache keys
// it: the client's address and port, the xid, program/version/procedure and a hash of the
// argument bytes -- plus the export the call came through, which the NFS reply's new file handle
// names (a handle carries its export's id), so the reply rebuilt from the journal is the one the
// client was sent, byte for byte.
//
// It travels in the request (fs::call::VolumeRequest::identity), never inside OpContext
// (which holds the credential only):
//  - the NFS program puts it in the request of each volume call of a non-idempotent procedure;
//  - nvram::JournalVolume records it with the call and its reply when it journals a mutation;
//  - a call forwarded over the interconnect carries it as an optional part of the encoded
//    request (fs/call/codec.h), so the owner's journal records it. (CallIdentityScope, below,
//    gives it to the requests that fs::Volume's typed methods build on this thread: tests and
//    tools that call volumes as methods.)
//  - the volume (nvram::JournalVolume, nvram/answered_calls.h) runs each identified call once:
//    a copy of it -- the client's retransmission forwarded again by another node, a dead
//    forwarder's copy arriving late -- gets the first copy's reply instead of running again.
// So an identity decides whether a call runs, exactly as the duplicate request cache's key
// does: the NFS program names a call by the address the call came from, and a node forwards
// the name it was given (peers are proven by the cluster key). A call that claims another
// client's name is one the duplicate request cache would already have taken for that client's.
#pragma once

#include <array>
#include <cstdint>

namespace nasd::fs {

struct CallIdentity {
  std::array<uint8_t, 16> address{};  // IPv4 uses the first 4 bytes
  uint16_t family = 0;                // AF_INET / AF_INET6
  uint16_t port = 0;
  uint32_t xid = 0, prog = 0, vers = 0, proc = 0;
  uint64_t args_hash = 0;             // the RPC layer's hash of the procedure's argument bytes
  // The export (NFS export id, 24 bits; 0 when none) under which the call opened its first file
  // handle -- for CREATE, MKDIR, SYMLINK and MKNOD the parent directory's, under which the new
  // object's handle was issued. Not part of the reply cache's key: the cache's key is the call,
  // this is what its reply said.
  uint32_t export_id = 0;

  bool operator==(const CallIdentity&) const = default;
};

// Sets the identity of the call running on this thread until destroyed (scopes nest; a null
// identity hides an outer one). Not copyable: it lives on the stack of one call.
class CallIdentityScope {
 public:
  explicit CallIdentityScope(const CallIdentity* identity);
  ~CallIdentityScope();
  CallIdentityScope(const CallIdentityScope&) = delete;
  CallIdentityScope& operator=(const CallIdentityScope&) = delete;

  // The identity of the client call this thread is serving; nullptr when none (a read, an
  // internal call, a replay).
  static const CallIdentity* current();

 private:
  const CallIdentity* previous_;
};

}  // namespace nasd::fs
