#include "server/nfs/mount/mount_service.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "server/nfs/xdr/mount3_prot.h"
#include "server/nfs/xdr/xdr_codec.h"

namespace nasd::nfs {
namespace {

enum Proc : uint32_t { kNull = 0, kMnt = 1, kDump = 2, kUmnt = 3, kUmntAll = 4, kExport = 5 };
constexpr const char* kProcNames[] = {"NULL", "MNT", "DUMP", "UMNT", "UMNTALL", "EXPORT"};

static_assert(FileHandle::kSize == FHSIZE, "MOUNT v1/v2 replies carry exactly one nasd handle");

rpc::DispatchResult accepted(rpc::AcceptStat stat = rpc::AcceptStat::Success) {
  rpc::DispatchResult r;
  r.accept = stat;
  return r;
}

template <typename T>
rpc::DispatchResult reply(xdr::Routine<T> routine, const T& res, std::vector<uint8_t>* out) {
  return accepted(xdr::append(routine, res, out) ? rpc::AcceptStat::Success
                                                  : rpc::AcceptStat::SystemErr);
}

uint32_t to_mountstat(fs::Status s) {
  switch (s) {
    case fs::Status::Perm: return MNT3ERR_PERM;
    case fs::Status::NoEnt: return MNT3ERR_NOENT;
    case fs::Status::Io: return MNT3ERR_IO;
    case fs::Status::Access: return MNT3ERR_ACCES;
    case fs::Status::NotDir: return MNT3ERR_NOTDIR;
    case fs::Status::Inval: return MNT3ERR_INVAL;
    case fs::Status::NameTooLong: return MNT3ERR_NAMETOOLONG;
    case fs::Status::NotSupp: return MNT3ERR_NOTSUPP;
    default: return MNT3ERR_SERVERFAULT;
  }
}

// MNT's path in the form the mount table records: normalized, so "/r/v0/" and "/r//v0"
// are one entry and UMNT finds what MNT stored.
std::string join_path(const std::vector<std::string>& components) {
  std::string path;
  for (const auto& c : components) path += "/" + c;
  return path.empty() ? "/" : path;
}

}  // namespace

std::string peer_host(const sockaddr_storage& peer) {
  char text[INET6_ADDRSTRLEN] = "unknown";
  if (peer.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(peer).sin_addr, text, sizeof text);
  } else if (peer.ss_family == AF_INET6) {
    const in6_addr& a6 = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a6)) inet_ntop(AF_INET, a6.s6_addr + 12, text, sizeof text);
    else inet_ntop(AF_INET6, &a6, text, sizeof text);
  }
  return text;
}

struct MountService::Mounted {
  FileHandle handle;
  std::string path;  // normalized
};

MountService::MountService(std::shared_ptr<fs::VolumeResolver> volumes,
                           std::shared_ptr<Exports> exports, std::shared_ptr<HandleCodec> handles,
                           std::shared_ptr<MountTable> mounts)
    : volumes_(std::move(volumes)),
      exports_(std::move(exports)),
      handles_(std::move(handles)),
      mounts_(std::move(mounts)) {}

std::string_view MountService::proc_name(uint32_t proc) const {
  return proc < num_procs() ? kProcNames[proc] : "UNKNOWN";
}

rpc::DispatchResult MountService::dispatch(const rpc::CallContext& call,
                                           std::span<const uint8_t> args,
                                           std::vector<uint8_t>* results) {
  if (call.vers < low_version() || call.vers > high_version()) {
    rpc::DispatchResult r = accepted(rpc::AcceptStat::ProgMismatch);
    r.low_version = low_version();
    r.high_version = high_version();
    return r;
  }
  try {
    switch (call.proc) {
      case kNull: return accepted();
      case kMnt: return mnt(call, args, results);
      case kDump: return dump(results);
      case kUmnt: return umnt(call, args);
      case kUmntAll: return umntall(call);
      case kExport: return export_list(results);
      default: return accepted(rpc::AcceptStat::ProcUnavail);
    }
  } catch (const std::exception&) {
    return accepted(rpc::AcceptStat::SystemErr);  // e.g. a volume out of memory
  }
}

uint32_t MountService::resolve(const rpc::CallContext& call, const char* path,
                               Mounted* out) const {
  std::vector<std::string> components;
  if (std::strchr(path, '\n')) return MNT3ERR_INVAL;  // could not be recorded in the table
  if (!split_export_path(path, &components)) return path[0] == '/' ? MNT3ERR_INVAL : MNT3ERR_NOENT;
  size_t matched = 0;
  Exports::Policy policy = exports_->for_path(components, &matched);
  if (!policy) return MNT3ERR_NOENT;
  if (!policy->allows(call.peer)) return MNT3ERR_ACCES;
  // As mountd: a `secure` export answers only a reserved source port.
  if (!policy->port_allowed(call.peer)) return MNT3ERR_ACCES;
  fs::Volume* volume = volumes_->find(policy->volume_id);
  if (!volume) return MNT3ERR_SERVERFAULT;  // configured, but the volume is not online

  // A path below the export is walked one name at a time, with the caller's squashed
  // credential, so MNT grants no more than LOOKUP would.
  fs::OpContext ctx;
  ctx.cred = policy->credential_for(call.cred);
  fs::InodeId inode = volume->root();
  // A volume forwarded to an owner that has not answered yet has no known root: refuse rather
  // than hand out a handle that will never work.
  if (inode == fs::InodeId{}) return MNT3ERR_SERVERFAULT;
  uint32_t volume_id = policy->volume_id;
  for (size_t i = matched; i < components.size(); i++) {
    std::optional<fs::Attr> attr, dir_attr;
    fs::InodeId next;
    fs::Status st = volume->lookup(ctx, inode, components[i], &next, &attr, &dir_attr);
    if (st != fs::Status::Ok) return to_mountstat(st);
    if (auto other = fs::junction_target(next)) {
      // /r/vN: continue at that volume's root, under that volume's own export for this
      // client; a volume none of whose exports lists the client is not entered.
      std::vector<std::string> crossed(components.begin(), components.begin() + i + 1);
      policy = exports_->for_crossing(*other, join_path(crossed), call.peer);
      if (!policy) return MNT3ERR_ACCES;
      if (!policy->port_allowed(call.peer)) return MNT3ERR_ACCES;
      ctx.cred = policy->credential_for(call.cred);
      volume = volumes_->find(*other);
      if (!volume) return MNT3ERR_NOENT;
      volume_id = *other;
      next = volume->root();
      if (next == fs::InodeId{}) return MNT3ERR_SERVERFAULT;
      attr.reset();
    }
    if (!attr) {
      fs::Attr a;
      st = volume->getattr(ctx, next, &a);
      if (st != fs::Status::Ok) return to_mountstat(st);
      attr = a;
    }
    if (attr->type != fs::FileType::Dir) return MNT3ERR_NOTDIR;
    inode = next;
  }
  out->handle = handles_->encode(volume_id, inode, policy->export_id);
  out->path = join_path(components);
  return MNT3_OK;
}

rpc::DispatchResult MountService::mnt(const rpc::CallContext& call, std::span<const uint8_t> args,
                                      std::vector<uint8_t>* results) {
  xdr::Decoded<mnt_dirpath> path(xdr_mnt_dirpath);
  if (!path.decode(args)) return accepted(rpc::AcceptStat::GarbageArgs);
  Mounted m;
  // A path with a NUL byte would be cut short at it and name another directory.
  uint32_t status = path.encodes_back_to(args) ? resolve(call, *path, &m)
                                               : static_cast<uint32_t>(MNT3ERR_INVAL);
  if (status == MNT3_OK) mounts_->add(peer_host(call.peer), m.path);

  if (call.vers < 3) {
    // Versions 1 and 2 report a Unix errno; the NFSv3-only codes become EIO.
    mnt_fhstatus res{};
    res.fhs_status = status < 10000 ? status : static_cast<uint32_t>(MNT3ERR_IO);
    if (status == MNT3_OK) std::memcpy(res.mnt_fhstatus_u.fhs_fhandle, m.handle.bytes.data(), FHSIZE);
    return reply(xdr_mnt_fhstatus, res, results);
  }
  mountres3 res{};
  res.fhs_status = static_cast<mountstat3>(status);
  int flavors[] = {static_cast<int>(rpc::kAuthSys), static_cast<int>(rpc::kAuthNone)};
  if (status == MNT3_OK) {
    mountres3_ok& ok = res.mountres3_u.mountinfo;
    ok.fhandle.mnt_fhandle3_len = FileHandle::kSize;
    ok.fhandle.mnt_fhandle3_val = reinterpret_cast<char*>(m.handle.bytes.data());
    ok.auth_flavors.auth_flavors_len = 2;
    ok.auth_flavors.auth_flavors_val = flavors;
  }
  return reply(xdr_mountres3, res, results);
}

rpc::DispatchResult MountService::dump(std::vector<uint8_t>* results) const {
  std::vector<MountEntry> entries = mounts_->entries();
  std::vector<mnt_mountbody> nodes(entries.size());
  for (size_t i = 0; i < entries.size(); i++) {
    nodes[i].ml_hostname = entries[i].host.data();
    nodes[i].ml_directory = entries[i].path.data();
    nodes[i].ml_next = i + 1 < nodes.size() ? &nodes[i + 1] : nullptr;
  }
  mnt_mountlist list = nodes.empty() ? nullptr : nodes.data();
  return reply(xdr_mnt_mountlist, list, results);
}

rpc::DispatchResult MountService::umnt(const rpc::CallContext& call,
                                       std::span<const uint8_t> args) {
  xdr::Decoded<mnt_dirpath> path(xdr_mnt_dirpath);
  if (!path.decode(args)) return accepted(rpc::AcceptStat::GarbageArgs);
  std::vector<std::string> components;
  if (split_export_path(*path, &components))
    mounts_->remove(peer_host(call.peer), join_path(components));
  return accepted();
}

rpc::DispatchResult MountService::umntall(const rpc::CallContext& call) {
  mounts_->remove_host(peer_host(call.peer));
  return accepted();
}

rpc::DispatchResult MountService::export_list(std::vector<uint8_t>* results) const {
  const auto& exports = exports_->all();
  std::vector<mnt_exportnode> nodes(exports.size());
  std::vector<std::vector<mnt_groupnode>> groups(exports.size());
  for (size_t i = 0; i < exports.size(); i++) {
    const ExportPolicy& e = exports[i];
    groups[i].resize(e.clients.size());
    for (size_t j = 0; j < e.clients.size(); j++) {
      groups[i][j].gr_name = const_cast<char*>(e.clients[j].text().c_str());
      groups[i][j].gr_next = j + 1 < groups[i].size() ? &groups[i][j + 1] : nullptr;
    }
    nodes[i].ex_dir = const_cast<char*>(e.path.c_str());
    nodes[i].ex_groups = groups[i].empty() ? nullptr : groups[i].data();
    nodes[i].ex_next = i + 1 < nodes.size() ? &nodes[i + 1] : nullptr;
  }
  mnt_exports list = nodes.empty() ? nullptr : nodes.data();
  return reply(xdr_mnt_exports, list, results);
}

}  // namespace nasd::nfs
