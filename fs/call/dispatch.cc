#include "fs/call/dispatch.h"

namespace nasd::fs::call {
namespace {

// DESCRIBE: the volume's facts.
VolumeReply describe(const fs::Volume& v) {
  VolumeReply reply;
  reply.op = VolumeOp::Describe;
  // A volume this node stands in for before it is opened here (or while nobody may serve it)
  // has no root to tell: "not yet", or the forwarder would keep {0, 0} as the root and
  // refuse every mount of the volume for good.
  const fs::InodeId root = v.root();
  reply.status = root == fs::InodeId{} ? fs::Status::Jukebox : fs::Status::Ok;
  reply.result = reply.status == fs::Status::Ok ? DescribeResult{root, v.limits()}
                                                : DescribeResult{};
  return reply;
}

// One overload per argument struct: unpack, call, pack the out-parameters.
struct Executor {
  fs::TypedVolume& v;
  const fs::OpContext& ctx;
  VolumeReply& reply;

  template <class R>
  void done(fs::Status s, R&& result) {
    reply.status = s;
    reply.result = std::forward<R>(result);
  }

  void operator()(const GetattrArgs& a) {
    AttrResult r;
    done(v.getattr(ctx, a.id, &r.attr), std::move(r));
  }
  void operator()(const SetattrArgs& a) {
    WccResult r;
    done(v.setattr(ctx, a.id, a.sa, a.guard_ctime, &r.wcc), std::move(r));
  }
  void operator()(const LookupArgs& a) {
    LookupResult r;
    done(v.lookup(ctx, a.dir, a.name, &r.id, &r.obj_attr, &r.dir_attr), std::move(r));
  }
  void operator()(const AccessArgs& a) {
    AccessResult r;
    done(v.access(ctx, a.id, a.requested, &r.granted, &r.attr), std::move(r));
  }
  void operator()(const ReadlinkArgs& a) {
    ReadlinkResult r;
    done(v.readlink(ctx, a.id, &r.target, &r.attr), std::move(r));
  }
  void operator()(const ReadArgs& a) {
    ReadResult r;
    done(v.read(ctx, a.id, a.offset, a.count, &r.data, &r.eof, &r.attr), std::move(r));
  }
  void operator()(const WriteArgs& a) {
    WriteResult r;
    done(v.write(ctx, a.id, a.offset, a.data, a.stable, &r.committed, &r.wcc), std::move(r));
  }
  void operator()(const CreateArgs& a) {
    CreatedResult r;
    done(v.create(ctx, a.dir, a.name, a.mode, a.sa, a.verifier, &r.id, &r.obj_attr, &r.dir_wcc),
         std::move(r));
  }
  void operator()(const MkdirArgs& a) {
    CreatedResult r;
    done(v.mkdir(ctx, a.dir, a.name, a.sa, &r.id, &r.obj_attr, &r.dir_wcc), std::move(r));
  }
  void operator()(const SymlinkArgs& a) {
    CreatedResult r;
    done(v.symlink(ctx, a.dir, a.name, a.target, a.sa, &r.id, &r.obj_attr, &r.dir_wcc),
         std::move(r));
  }
  void operator()(const MknodArgs& a) {
    CreatedResult r;
    done(v.mknod(ctx, a.dir, a.name, a.type, a.sa, a.rdev_major, a.rdev_minor, &r.id,
                 &r.obj_attr, &r.dir_wcc),
         std::move(r));
  }
  void operator()(const RemoveArgs& a) {
    WccResult r;
    done(v.remove(ctx, a.dir, a.name, &r.wcc), std::move(r));
  }
  void operator()(const RmdirArgs& a) {
    WccResult r;
    done(v.rmdir(ctx, a.dir, a.name, &r.wcc), std::move(r));
  }
  void operator()(const RenameArgs& a) {
    RenameResult r;
    done(v.rename(ctx, a.from_dir, a.from_name, a.to_dir, a.to_name, &r.from_wcc, &r.to_wcc),
         std::move(r));
  }
  void operator()(const LinkArgs& a) {
    LinkResult r;
    done(v.link(ctx, a.file, a.dir, a.name, &r.file_attr, &r.dir_wcc), std::move(r));
  }
  void operator()(const ReaddirArgs& a) {
    ReaddirCallResult r;
    done(v.readdir(ctx, a.dir, a.cookie, a.cookieverf, a.max_entries, a.with_attrs, &r.listing),
         std::move(r));
  }
  void operator()(const FsstatArgs& a) {
    FsstatResult r;
    done(v.fsstat(ctx, a.id, &r.stat, &r.attr), std::move(r));
  }
  void operator()(const CommitArgs& a) {
    WccResult r;
    done(v.commit(ctx, a.id, a.offset, a.count, &r.wcc), std::move(r));
  }
  void operator()(const DescribeArgs&) { reply = describe(v); }
};

// The non-blocking attempts (fs::TypedVolume::try_*): engaged when the volume answered without
// waiting; an attempt that would wait, and DESCRIBE (not an attempt), is "not here".
struct Attempt {
  fs::TypedVolume& v;
  const fs::OpContext& ctx;
  VolumeReply& reply;

  template <class R>
  bool done(std::optional<fs::Status> s, R&& result) {
    if (!s) return false;
    reply.status = *s;
    reply.result = std::forward<R>(result);
    return true;
  }

  bool operator()(const GetattrArgs& a) {
    AttrResult r;
    return done(v.try_getattr(ctx, a.id, &r.attr), std::move(r));
  }
  bool operator()(const LookupArgs& a) {
    LookupResult r;
    return done(v.try_lookup(ctx, a.dir, a.name, &r.id, &r.obj_attr, &r.dir_attr), std::move(r));
  }
  bool operator()(const AccessArgs& a) {
    AccessResult r;
    return done(v.try_access(ctx, a.id, a.requested, &r.granted, &r.attr), std::move(r));
  }
  bool operator()(const ReadArgs& a) {
    ReadResult r;
    return done(v.try_read(ctx, a.id, a.offset, a.count, &r.data, &r.eof, &r.attr),
                std::move(r));
  }
  bool operator()(const ReadlinkArgs& a) {
    ReadlinkResult r;
    return done(v.try_readlink(ctx, a.id, &r.target, &r.attr), std::move(r));
  }
  bool operator()(const ReaddirArgs& a) {
    ReaddirCallResult r;
    return done(v.try_readdir(ctx, a.dir, a.cookie, a.cookieverf, a.max_entries, a.with_attrs,
                              &r.listing),
                std::move(r));
  }
  bool operator()(const FsstatArgs& a) {
    FsstatResult r;
    return done(v.try_fsstat(ctx, a.id, &r.stat, &r.attr), std::move(r));
  }
  // A WRITE or COMMIT attempt may park on its NVRAM commit when run inside a resumable call
  // (fs/volume.h): the caller must then discard this reply and run the call again once the
  // answer is in. Outside one, a stable WRITE is answered only when its commit needs no wait.
  bool operator()(const WriteArgs& a) {
    WriteResult r;
    return done(v.try_write(ctx, a.id, a.offset, a.data, a.stable, &r.committed, &r.wcc),
                std::move(r));
  }
  bool operator()(const CommitArgs& a) {
    WccResult r;
    return done(v.try_commit(ctx, a.id, a.offset, a.count, &r.wcc), std::move(r));
  }
  bool operator()(const SetattrArgs& a) {
    WccResult r;
    return done(v.try_setattr(ctx, a.id, a.sa, a.guard_ctime, &r.wcc), std::move(r));
  }
  bool operator()(const CreateArgs& a) {
    CreatedResult r;
    return done(v.try_create(ctx, a.dir, a.name, a.mode, a.sa, a.verifier, &r.id, &r.obj_attr,
                             &r.dir_wcc),
                std::move(r));
  }
  bool operator()(const MkdirArgs& a) {
    CreatedResult r;
    return done(v.try_mkdir(ctx, a.dir, a.name, a.sa, &r.id, &r.obj_attr, &r.dir_wcc),
                std::move(r));
  }
  bool operator()(const SymlinkArgs& a) {
    CreatedResult r;
    return done(v.try_symlink(ctx, a.dir, a.name, a.target, a.sa, &r.id, &r.obj_attr,
                              &r.dir_wcc),
                std::move(r));
  }
  bool operator()(const MknodArgs& a) {
    CreatedResult r;
    return done(v.try_mknod(ctx, a.dir, a.name, a.type, a.sa, a.rdev_major, a.rdev_minor,
                            &r.id, &r.obj_attr, &r.dir_wcc),
                std::move(r));
  }
  bool operator()(const RemoveArgs& a) {
    WccResult r;
    return done(v.try_remove(ctx, a.dir, a.name, &r.wcc), std::move(r));
  }
  bool operator()(const RmdirArgs& a) {
    WccResult r;
    return done(v.try_rmdir(ctx, a.dir, a.name, &r.wcc), std::move(r));
  }
  bool operator()(const RenameArgs& a) {
    RenameResult r;
    return done(v.try_rename(ctx, a.from_dir, a.from_name, a.to_dir, a.to_name, &r.from_wcc,
                             &r.to_wcc),
                std::move(r));
  }
  bool operator()(const LinkArgs& a) {
    LinkResult r;
    return done(v.try_link(ctx, a.file, a.dir, a.name, &r.file_attr, &r.dir_wcc),
                std::move(r));
  }
  bool operator()(const DescribeArgs&) { return false; }
};

}  // namespace

bool has_attempt(VolumeOp op) {
  switch (op) {
    case VolumeOp::Getattr:
    case VolumeOp::Lookup:
    case VolumeOp::Access:
    case VolumeOp::Read:
    case VolumeOp::Readlink:
    case VolumeOp::Readdir:
    case VolumeOp::Fsstat:
    case VolumeOp::Write:
    case VolumeOp::Commit:
      return true;
    default:
      return false;
  }
}

std::optional<VolumeReply> try_dispatch_typed(fs::TypedVolume& volume, const VolumeRequest& req) {
  VolumeReply reply;
  reply.op = req.op();
  if (!std::visit(Attempt{volume, req.ctx, reply}, req.args)) return std::nullopt;
  reply.write_verifier = volume.write_verifier();
  return reply;
}

VolumeReply dispatch_typed(fs::TypedVolume& volume, const VolumeRequest& req) {
  VolumeReply reply;
  reply.op = req.op();
  std::visit(Executor{volume, req.ctx, reply}, req.args);
  // Sampled after the call: a restart between calls must show up in this very reply.
  reply.write_verifier = volume.write_verifier();
  return reply;
}

std::optional<VolumeReply> try_execute_volume_call(fs::Volume& volume, const VolumeRequest& req) {
  if (!has_attempt(req.op())) return std::nullopt;
  std::optional<VolumeReply> reply = volume.try_call(req);
  if (reply) reply->write_verifier = volume.write_verifier();
  return reply;
}

VolumeReply execute_volume_call(fs::Volume& volume, const VolumeRequest& req) {
  VolumeReply reply = req.op() == VolumeOp::Describe ? describe(volume) : volume.call(req);
  // Sampled after the call: a restart between calls must show up in this very reply.
  reply.write_verifier = volume.write_verifier();
  return reply;
}

VolumeReply refused_volume_call(VolumeOp op, fs::Status status) {
  VolumeReply reply;
  reply.op = op;
  reply.status = status;
  return reply;
}

}  // namespace nasd::fs::call

namespace nasd::fs {

call::VolumeReply TypedVolume::call(const call::VolumeRequest& req) {
  return call::dispatch_typed(*this, req);
}

std::optional<call::VolumeReply> TypedVolume::try_call(const call::VolumeRequest& req) {
  return call::try_dispatch_typed(*this, req);
}

}  // namespace nasd::fs
