#include "bench/fileset_builder.h"

#include <algorithm>

#include "bench/rpc_batch.h"

namespace nasd::bench {

namespace {

constexpr size_t kWindow = 32;        // creation requests in flight per session
constexpr uint32_t kMaxChunk = 65536;  // WRITE size while filling files

sattr3 with_mode(uint32_t mode) {
  sattr3 a{};
  a.mode.set_it = 1;
  a.mode.set_mode3_u.mode = mode;
  return a;
}

std::string status_text(int status) { return nfsstat3_to_str(status); }

// A reply to a MKDIR/CREATE/SYMLINK that did not hand back the new object's handle is of no
// use to us: the load would have to LOOKUP every object first.
std::string take_handle(const post_op_fh3& obj, FileHandle* out) {
  if (!obj.handle_follows) return "server did not return the new object's handle";
  *out = FileHandle::from(obj.post_op_fh3_u.handle);
  return "";
}

class Builder {
 public:
  Builder(NfsSession& s, const FilesetShape& shape, Fileset* out, std::string* error)
      : s_(s), rpc_(s.rpc()), shape_(shape), out_(out), error_(error) {}

  bool run(const std::string& workdir, const std::string& owner) {
    out_->export_root = s_.root();
    out_->workdir = workdir;
    out_->owner = owner;
    if (!mkdir_or_lookup(s_.root(), workdir, &out_->workdir_fh)) return false;
    if (!mkdir_batch(out_->workdir_fh, {owner}, &out_->top, "MKDIR " + workdir + "/" + owner)) return false;
    return make_dirs() && make_files() && make_symlinks() && fill_files() && make_listing();
  }

 private:
  bool batch(const std::string& what, size_t n, const BatchIssue& issue, const BatchReply& reply) {
    std::string why;
    if (run_batch(rpc_, n, kWindow, issue, reply, s_.timeout_ms(), &why)) return true;
    *error_ = what + ": " + why;
    return false;
  }

  bool mkdir_or_lookup(const FileHandle& parent, const std::string& name, FileHandle* out) {
    nfs_fh3 dir = parent.view();
    int status = 0;
    bool ok = batch("MKDIR " + name, 1,
        [&](size_t, rpc_cb cb, void* ctx) {
          MKDIR3args a{};
          a.where.dir = dir;
          a.where.name = const_cast<char*>(name.c_str());
          a.attributes = with_mode(0755);
          return rpc_nfs3_mkdir_async(rpc_, cb, &a, ctx);
        },
        [&](size_t, void* data) {
          auto* res = static_cast<MKDIR3res*>(data);
          status = res->status;
          if (status == NFS3ERR_EXIST) return std::string();
          if (status != NFS3_OK) return "MKDIR " + name + ": " + status_text(status);
          return take_handle(res->MKDIR3res_u.resok.obj, out);
        });
    if (!ok || status != NFS3ERR_EXIST) return ok;
    // Another worker made it first: that is the point of sharing it.
    return batch("LOOKUP " + name, 1,
        [&](size_t, rpc_cb cb, void* ctx) {
          LOOKUP3args a{};
          a.what.dir = dir;
          a.what.name = const_cast<char*>(name.c_str());
          return rpc_nfs3_lookup_async(rpc_, cb, &a, ctx);
        },
        [&](size_t, void* data) {
          auto* res = static_cast<LOOKUP3res*>(data);
          if (res->status != NFS3_OK) return "LOOKUP " + name + ": " + status_text(res->status);
          *out = FileHandle::from(res->LOOKUP3res_u.resok.object);
          return std::string();
        });
  }

  bool mkdir_batch(const FileHandle& parent, const std::vector<std::string>& names, FileHandle* outs,
                   const std::string& what) {
    nfs_fh3 dir = parent.view();
    return batch(what, names.size(),
        [&](size_t i, rpc_cb cb, void* ctx) {
          MKDIR3args a{};
          a.where.dir = dir;
          a.where.name = const_cast<char*>(names[i].c_str());
          a.attributes = with_mode(0755);
          return rpc_nfs3_mkdir_async(rpc_, cb, &a, ctx);
        },
        [&](size_t i, void* data) {
          auto* res = static_cast<MKDIR3res*>(data);
          if (res->status != NFS3_OK) return "MKDIR " + names[i] + ": " + status_text(res->status);
          return take_handle(res->MKDIR3res_u.resok.obj, &outs[i]);
        });
  }

  bool make_dirs() {
    std::vector<std::string> names;
    for (size_t i = 0; i < shape_.dirs; ++i) names.push_back("d" + std::to_string(i));
    std::vector<FileHandle> fhs(names.size());
    if (!mkdir_batch(out_->top, names, fhs.data(), "MKDIR directories")) return false;
    out_->dirs.resize(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      out_->dirs[i].name = names[i];
      out_->dirs[i].fh = fhs[i];
    }
    return true;
  }

  // Regular files first (f<i>), then the spares (r<i>); both spread round-robin over the dirs.
  bool make_files() {
    size_t nfiles = shape_.file_sizes.size();
    size_t total = nfiles + shape_.spares;
    std::vector<std::string> names(total);
    std::vector<FileHandle> fhs(total);
    for (size_t i = 0; i < total; ++i) {
      names[i] = i < nfiles ? "f" + std::to_string(i) : "r" + std::to_string(i - nfiles);
    }
    bool ok = batch("CREATE files", total,
        [&](size_t i, rpc_cb cb, void* ctx) {
          CREATE3args a{};
          a.where.dir = out_->dirs[i % out_->dirs.size()].fh.view();
          a.where.name = const_cast<char*>(names[i].c_str());
          a.how.mode = GUARDED;
          a.how.createhow3_u.obj_attributes = with_mode(0644);
          return rpc_nfs3_create_async(rpc_, cb, &a, ctx);
        },
        [&](size_t i, void* data) {
          auto* res = static_cast<CREATE3res*>(data);
          if (res->status != NFS3_OK) return "CREATE " + names[i] + ": " + status_text(res->status);
          return take_handle(res->CREATE3res_u.resok.obj, &fhs[i]);
        });
    if (!ok) return false;
    for (size_t i = 0; i < total; ++i) {
      FilesetDir& d = out_->dirs[i % out_->dirs.size()];
      if (i < nfiles) {
        d.names.push_back(names[i]);
        out_->files.push_back({fhs[i], shape_.file_sizes[i]});
      } else {
        d.removable.push_back(names[i]);
      }
    }
    return true;
  }

  // s<i> lives next to f<i> and points at it by its relative name.
  bool make_symlinks() {
    size_t n = std::min(shape_.symlinks, shape_.file_sizes.size());
    std::vector<std::string> names(n), targets(n);
    std::vector<FileHandle> fhs(n);
    for (size_t i = 0; i < n; ++i) {
      names[i] = "s" + std::to_string(i);
      targets[i] = "f" + std::to_string(i);
    }
    bool ok = batch("SYMLINK", n,
        [&](size_t i, rpc_cb cb, void* ctx) {
          SYMLINK3args a{};
          a.where.dir = out_->dirs[i % out_->dirs.size()].fh.view();
          a.where.name = const_cast<char*>(names[i].c_str());
          a.symlink.symlink_attributes = with_mode(0777);
          a.symlink.symlink_data = const_cast<char*>(targets[i].c_str());
          return rpc_nfs3_symlink_async(rpc_, cb, &a, ctx);
        },
        [&](size_t i, void* data) {
          auto* res = static_cast<SYMLINK3res*>(data);
          if (res->status != NFS3_OK) return "SYMLINK " + names[i] + ": " + status_text(res->status);
          return take_handle(res->SYMLINK3res_u.resok.obj, &fhs[i]);
        });
    if (!ok) return false;
    for (size_t i = 0; i < n; ++i) {
      out_->dirs[i % out_->dirs.size()].names.push_back(names[i]);
      out_->symlinks.push_back(fhs[i]);
    }
    return true;
  }

  // UNSTABLE writes of every file's content, then one COMMIT per file: the fileset is on stable
  // storage before the first measured request, without paying a sync per chunk.
  bool fill_files() {
    uint32_t chunk = std::min<uint32_t>(kMaxChunk, s_.facts().wtmax ? s_.facts().wtmax : kMaxChunk);
    struct Piece { size_t file; uint64_t offset; uint32_t count; };
    std::vector<Piece> pieces;
    for (size_t f = 0; f < out_->files.size(); ++f) {
      for (uint64_t off = 0; off < out_->files[f].size; off += chunk) {
        pieces.push_back({f, off, static_cast<uint32_t>(std::min<uint64_t>(chunk, out_->files[f].size - off))});
      }
    }
    std::string pattern(chunk, '\0');
    for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<char>('a' + i % 26);
    bool ok = batch("WRITE file contents", pieces.size(),
        [&](size_t i, rpc_cb cb, void* ctx) {
          WRITE3args a{};
          a.file = out_->files[pieces[i].file].fh.view();
          a.offset = pieces[i].offset;
          a.count = pieces[i].count;
          a.stable = UNSTABLE;
          a.data.data_len = pieces[i].count;
          a.data.data_val = pattern.data();
          return rpc_nfs3_write_async(rpc_, cb, &a, ctx);
        },
        [&](size_t, void* data) {
          auto* res = static_cast<WRITE3res*>(data);
          if (res->status != NFS3_OK) return "WRITE: " + status_text(res->status);
          return std::string();
        });
    if (!ok) return false;
    ok = batch("COMMIT file contents", out_->files.size(),
        [&](size_t i, rpc_cb cb, void* ctx) {
          COMMIT3args a{};
          a.file = out_->files[i].fh.view();
          return rpc_nfs3_commit_async(rpc_, cb, &a, ctx);
        },
        [&](size_t, void* data) {
          auto* res = static_cast<COMMIT3res*>(data);
          if (res->status != NFS3_OK) return "COMMIT: " + status_text(res->status);
          return std::string();
        });
    if (!ok) return false;
    for (const FilesetFile& f : out_->files) out_->bytes += f.size;
    return true;
  }

  // The directory READDIRPLUS lists whole: `listing` in the worker's top, holding l0 .. l<N-1>.
  bool make_listing() {
    size_t n = shape_.listing_entries;
    if (n == 0) return true;
    if (!mkdir_batch(out_->top, {"listing"}, &out_->listing_dir, "MKDIR listing")) return false;
    nfs_fh3 dir = out_->listing_dir.view();
    std::vector<std::string> names(n);
    for (size_t i = 0; i < n; ++i) names[i] = "l" + std::to_string(i);
    bool ok = batch("CREATE listing entries", n,
        [&](size_t i, rpc_cb cb, void* ctx) {
          CREATE3args a{};
          a.where.dir = dir;
          a.where.name = const_cast<char*>(names[i].c_str());
          a.how.mode = GUARDED;
          a.how.createhow3_u.obj_attributes = with_mode(0644);
          return rpc_nfs3_create_async(rpc_, cb, &a, ctx);
        },
        [&](size_t i, void* data) {
          auto* res = static_cast<CREATE3res*>(data);
          if (res->status != NFS3_OK) return "CREATE " + names[i] + ": " + status_text(res->status);
          return std::string();
        });
    if (ok) out_->listing_entries = n;
    return ok;
  }

  NfsSession& s_;
  rpc_context* rpc_;
  const FilesetShape& shape_;
  Fileset* out_;
  std::string* error_;
};

}  // namespace

bool build_fileset(NfsSession& session, const FilesetShape& shape, const std::string& workdir,
                   const std::string& owner, Fileset* out, std::string* error) {
  *out = Fileset{};
  if (shape.dirs == 0) {
    *error = "the fileset plan has no directories";
    return false;
  }
  Builder b(session, shape, out, error);
  return b.run(workdir, owner);
}

}  // namespace nasd::bench
