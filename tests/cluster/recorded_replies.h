// What journal recovery handed the reply cache (fs::RecoveredCallSink), for tests that check
// that a call is answered from memory only if its effect is in the file system: the xids of
// the calls recovery would answer without running them again.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include <optional>
#include <string>

#include "fs/call/recovered_call_sink.h"
#include "fs/call_identity.h"
#include "fs/volume.h"

namespace nasd::cluster::testing {

struct RecordedReplies : fs::RecoveredCallSink {
  std::vector<uint32_t> xids;
  void recovered(const fs::CallIdentity& identity, const fs::call::VolumeRequest&,
                 const fs::call::VolumeReply&) override {
    xids.push_back(identity.xid);
  }
  bool has(uint32_t xid) const { return std::find(xids.begin(), xids.end(), xid) != xids.end(); }
};

// A client's CREATE as the NFS program names it (fs/call_identity.h), told apart by its xid.
inline fs::CallIdentity client_create(uint32_t xid) {
  fs::CallIdentity id;
  id.family = 2;  // AF_INET
  id.address = {127, 0, 0, 9};
  id.port = 801;
  id.xid = xid;
  id.prog = 100003;
  id.vers = 3;
  id.proc = 8;  // NFSPROC3_CREATE
  id.args_hash = 0x5eed0000 + xid;
  return id;
}

// That CREATE of `name` in the root of `v`, as root, run as the NFS program runs it (inside
// the call's identity scope, which the journal records with the call).
inline fs::Status create_as_client(fs::Volume& v, const std::string& name, uint32_t xid,
                                   fs::CreateMode mode = fs::CreateMode::Unchecked) {
  const fs::CallIdentity id = client_create(xid);
  fs::CallIdentityScope scope(&id);
  fs::OpContext ctx;
  ctx.cred.uid = 0;
  ctx.cred.gid = 0;
  fs::InodeId made;
  std::optional<fs::Attr> attr;
  fs::Wcc wcc;
  return v.create(ctx, v.root(), name, mode, {}, 0, &made, &attr, &wcc);
}

// Whether `name` is in the root of `v` (a LOOKUP as root): the file a client call made.
inline bool exists_in_root(fs::Volume& v, const std::string& name) {
  fs::OpContext ctx;
  ctx.cred.uid = 0;
  ctx.cred.gid = 0;
  fs::InodeId id;
  std::optional<fs::Attr> obj_attr, dir_attr;
  return v.lookup(ctx, v.root(), name, &id, &obj_attr, &dir_attr) == fs::Status::Ok;
}

}  // namespace nasd::cluster::testing
