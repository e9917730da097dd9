// A call's results handed back as the out-parameters of a typed call (fs/volume.h's calls as
// methods, the NFS procedures' volume calls): one function per kind of result struct
// (fs/call/calls.h), each returning what moves that struct's fields into the caller's storage.
// `answer` makes a request with a volume's call() or try_call() and applies one of them.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "fs/call/calls.h"
#include "fs/volume.h"

namespace nasd::fs::call {

// The reply's status, after `take` moved the result to the caller; out-parameters stay as the
// caller initialised them when the call never reached a file system (the reply has no result).
template <class Args, class Take>
Status answer(VolumeReply& reply, Take&& take) {
  if (auto* r = std::get_if<typename Args::Result>(&reply.result)) take(*r);
  return reply.status;
}

inline auto to_attr(Attr* out) {
  return [out](AttrResult& r) { *out = std::move(r.attr); };
}
inline auto to_wcc(Wcc* wcc) {
  return [wcc](WccResult& r) { *wcc = std::move(r.wcc); };
}
inline auto to_lookup(InodeId* out, std::optional<Attr>* obj_attr,
                      std::optional<Attr>* dir_attr) {
  return [=](LookupResult& r) {
    *out = r.id;
    *obj_attr = std::move(r.obj_attr);
    *dir_attr = std::move(r.dir_attr);
  };
}
inline auto to_access(uint32_t* granted, std::optional<Attr>* attr) {
  return [=](AccessResult& r) {
    *granted = r.granted;
    *attr = std::move(r.attr);
  };
}
inline auto to_readlink(std::string* target, std::optional<Attr>* attr) {
  return [=](ReadlinkResult& r) {
    *target = std::move(r.target);
    *attr = std::move(r.attr);
  };
}
inline auto to_read(std::vector<uint8_t>* data, bool* eof, std::optional<Attr>* attr) {
  return [=](ReadResult& r) {
    *data = std::move(r.data);
    *eof = r.eof;
    *attr = std::move(r.attr);
  };
}
inline auto to_write(Stability* committed, Wcc* wcc) {
  return [=](WriteResult& r) {
    *committed = r.committed;
    *wcc = std::move(r.wcc);
  };
}
inline auto to_created(InodeId* out, std::optional<Attr>* obj_attr, Wcc* dir_wcc) {
  return [=](CreatedResult& r) {
    *out = r.id;
    *obj_attr = std::move(r.obj_attr);
    *dir_wcc = std::move(r.dir_wcc);
  };
}
inline auto to_rename(Wcc* from_wcc, Wcc* to_wcc) {
  return [=](RenameResult& r) {
    *from_wcc = std::move(r.from_wcc);
    *to_wcc = std::move(r.to_wcc);
  };
}
inline auto to_link(std::optional<Attr>* file_attr, Wcc* dir_wcc) {
  return [=](LinkResult& r) {
    *file_attr = std::move(r.file_attr);
    *dir_wcc = std::move(r.dir_wcc);
  };
}
inline auto to_readdir(ReaddirResult* out) {
  return [out](ReaddirCallResult& r) { *out = std::move(r.listing); };
}
inline auto to_fsstat(FsStat* out, std::optional<Attr>* attr) {
  return [=](FsstatResult& r) {
    *out = r.stat;
    *attr = std::move(r.attr);
  };
}

}  // namespace nasd::fs::call
