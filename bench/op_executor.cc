#include "bench/op_executor.h"

#include <algorithm>

#include "bench/clock.h"
#include "bench/stats.h"

namespace nasd::bench {

// Per-request state carried through libnfs to the reply callback.
struct OpExecutor::Pending {
  OpExecutor* self = nullptr;
  OpType op = OpType::kGetattr;
  int64_t sent_ns = 0;
  size_t dir = 0;      // CREATE/REMOVE: where the name lives
  std::string name;    // CREATE/REMOVE: the name, so the REMOVE pool follows what exists
  cookie3 cookie = 0;  // whole-directory READDIRPLUS: where the next call continues
  cookieverf3 verifier{};
  uint64_t listing_calls = 0;
};

namespace {
constexpr uint32_t kAccessAll = ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND |
                                ACCESS3_DELETE | ACCESS3_EXECUTE;
constexpr uint32_t kReaddirCount = 8192;
constexpr uint32_t kReaddirplusMax = 32768;
}  // namespace

OpExecutor::OpExecutor(NfsSession& session, Fileset& fileset, ReplySink& sink, const ExecutorOptions& options,
                       size_t worker_id)
    : session_(session), fileset_(fileset), sink_(sink), options_(options),
      worker_tag_("c" + std::to_string(worker_id) + "_") {
  const ServerFacts& f = session.facts();
  uint32_t cap = std::min(f.rtmax ? f.rtmax : options_.io_size, f.wtmax ? f.wtmax : options_.io_size);
  options_.io_size = std::max<uint32_t>(1, std::min(options_.io_size, cap));
  write_buffer_.assign(options_.io_size, 'w');
}

size_t OpExecutor::pick(size_t n, std::mt19937_64& rng) const {
  return std::uniform_int_distribution<size_t>(0, n - 1)(rng);
}

const FileHandle& OpExecutor::any_object(std::mt19937_64& rng) const {
  size_t n = fileset_.files.size() + fileset_.dirs.size() + fileset_.symlinks.size();
  size_t i = pick(n, rng);
  if (i < fileset_.files.size()) return fileset_.files[i].fh;
  i -= fileset_.files.size();
  if (i < fileset_.dirs.size()) return fileset_.dirs[i].fh;
  return fileset_.symlinks[i - fileset_.dirs.size()];
}

// A transfer-size-aligned offset that keeps the whole transfer inside the file.
uint64_t OpExecutor::pick_offset(uint64_t size, uint32_t count, std::mt19937_64& rng) const {
  if (size <= count) return 0;
  uint64_t slots = (size - count) / count + 1;
  return std::uniform_int_distribution<uint64_t>(0, slots - 1)(rng) * count;
}

// The next transfer of a streaming client: `count` bytes at `offset` of the current file, then on
// to the next file (wrapping round) once this one is done.
const FilesetFile& OpExecutor::next_sequential(uint32_t* count, uint64_t* offset) {
  if (seq_file_ >= fileset_.files.size()) seq_file_ = 0;
  const FilesetFile& f = fileset_.files[seq_file_];
  *offset = seq_offset_;
  *count = static_cast<uint32_t>(std::min<uint64_t>(options_.io_size, f.size > seq_offset_ ? f.size - seq_offset_ : 0));
  seq_offset_ += *count;
  if (seq_offset_ >= f.size) {
    seq_offset_ = 0;
    ++seq_file_;
  }
  return f;
}

bool OpExecutor::send_readdirplus(Pending* p, const FileHandle& dir) {
  READDIRPLUS3args a{};
  a.dir = dir.view();
  a.cookie = p->cookie;
  std::copy(std::begin(p->verifier), std::end(p->verifier), std::begin(a.cookieverf));
  a.dircount = kReaddirCount;
  a.maxcount = kReaddirplusMax;
  ++p->listing_calls;
  return rpc_nfs3_readdirplus_async(session_.rpc(), on_rpc_reply, &a, p) == 0;
}

bool OpExecutor::issue(OpType op, std::mt19937_64& rng) {
  auto* p = new Pending;
  p->self = this;
  p->op = op;
  if (!send(p, op, rng)) {
    delete p;
    return false;
  }
  ++in_flight_;
  return true;
}

bool OpExecutor::send(Pending* p, OpType op, std::mt19937_64& rng) {
  rpc_context* rpc = session_.rpc();
  p->sent_ns = monotonic_ns();
  switch (op) {
    case OpType::kGetattr: {
      GETATTR3args a{any_object(rng).view()};
      return rpc_nfs3_getattr_async(rpc, on_rpc_reply, &a, p) == 0;
    }
    case OpType::kSetattr: {
      SETATTR3args a{};
      a.object = fileset_.files[pick(fileset_.files.size(), rng)].fh.view();
      a.new_attributes.mode.set_it = 1;
      a.new_attributes.mode.set_mode3_u.mode = (mode_flip_++ & 1) ? 0640 : 0644;
      return rpc_nfs3_setattr_async(rpc, on_rpc_reply, &a, p) == 0;
    }
    case OpType::kLookup: {
      const FilesetDir& d = fileset_.dirs[pick(fileset_.dirs.size(), rng)];
      p->name = d.names.empty() ? std::string("missing") : d.names[pick(d.names.size(), rng)];
      LOOKUP3args a{};
      a.what.dir = d.fh.view();
      a.what.name = p->name.data();
      return rpc_nfs3_lookup_async(rpc, on_rpc_reply, &a, p) == 0;
    }
    case OpType::kAccess: {
      ACCESS3args a{any_object(rng).view(), kAccessAll};
      return rpc_nfs3_access_async(rpc, on_rpc_reply, &a, p) == 0;
    }
    case OpType::kReadlink: {
      if (fileset_.symlinks.empty()) return false;
      READLINK3args a{fileset_.symlinks[pick(fileset_.symlinks.size(), rng)].view()};
      return rpc_nfs3_readlink_async(rpc, on_rpc_reply, &a, p) == 0;
    }
    case OpType::kRead: {
      READ3args a{};
      if (options_.sequential) {
        a.file = next_sequential(&a.count, &a.offset).fh.view();
      } else {
        const FilesetFile& f = fileset_.files[pick(fileset_.files.size(), rng)];
        a.file = f.fh.view();
        a.count = static_cast<uint32_t>(std::min<uint64_t>(options_.io_size, f.size));
        a.offset = pick_offset(f.size, a.count, rng);
      }
      return rpc_nfs3_read_async(rpc, on_rpc_reply, &a, p) == 0;
    }
    case OpType::kWrite: {
      WRITE3args a{};
      if (options_.sequential) {
        a.file = next_sequential(&a.count, &a.offset).fh.view();
      } else {
        const FilesetFile& f = fileset_.files[pick(fileset_.files.size(), rng)];
        a.file = f.fh.view();
        a.count = static_cast<uint32_t>(std::min<uint64_t>(options_.io_size, f.size));
        a.offset = pick_offset(f.size, a.count, rng);
      }
      a.stable = options_.unstable_writes ? UNSTABLE : FILE_SYNC;
      a.data.data_len = a.count;
      a.data.data_val = write_buffer_.data();
      return rpc_nfs3_write_async(rpc, on_rpc_reply, &a, p) == 0;
    }
    case OpType::kCreate: {
      p->dir = pick(fileset_.dirs.size(), rng);
      p->name = worker_tag_ + std::to_string(created_++);
      CREATE3args a{};
      a.where.dir = fileset_.dirs[p->dir].fh.view();
      a.where.name = p->name.data();
      a.how.mode = GUARDED;
      a.how.createhow3_u.obj_attributes.mode.set_it = 1;
      a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0644;
      return rpc_nfs3_create_async(rpc, on_rpc_reply, &a, p) == 0;
    }
    case OpType::kRemove: {
      // Take a name that exists: start at a random directory and walk to one that has spares.
      size_t start = pick(fileset_.dirs.size(), rng);
      p->dir = start;
      for (size_t k = 0; k < fileset_.dirs.size(); ++k) {
        size_t d = (start + k) % fileset_.dirs.size();
        if (!fileset_.dirs[d].removable.empty()) {
          p->dir = d;
          break;
        }
      }
      auto& pool = fileset_.dirs[p->dir].removable;
      if (pool.empty() && options_.create_when_nothing_to_remove) {
        p->op = OpType::kCreate;  // counted as what was sent
        return send(p, OpType::kCreate, rng);
      }
      // With nothing left to remove the request still goes out and honestly fails with NOENT.
      if (pool.empty()) {
        p->name = worker_tag_ + "none";
      } else {
        size_t i = pick(pool.size(), rng);
        p->name = std::move(pool[i]);
        pool[i] = std::move(pool.back());
        pool.pop_back();
      }
      REMOVE3args a{};
      a.object.dir = fileset_.dirs[p->dir].fh.view();
      a.object.name = p->name.data();
      return rpc_nfs3_remove_async(rpc, on_rpc_reply, &a, p) == 0;
    }
    case OpType::kReaddir: {
      READDIR3args a{};
      a.dir = fileset_.dirs[pick(fileset_.dirs.size(), rng)].fh.view();
      a.count = kReaddirCount;
      return rpc_nfs3_readdir_async(rpc, on_rpc_reply, &a, p) == 0;
    }
    case OpType::kReaddirplus: {
      if (fileset_.listing_entries > 0) return send_readdirplus(p, fileset_.listing_dir);
      READDIRPLUS3args a{};
      a.dir = fileset_.dirs[pick(fileset_.dirs.size(), rng)].fh.view();
      a.dircount = kReaddirCount;
      a.maxcount = kReaddirplusMax;
      return rpc_nfs3_readdirplus_async(rpc, on_rpc_reply, &a, p) == 0;
    }
    case OpType::kFsstat: {
      FSSTAT3args a{fileset_.export_root.view()};
      return rpc_nfs3_fsstat_async(rpc, on_rpc_reply, &a, p) == 0;
    }
    case OpType::kFsinfo: {
      FSINFO3args a{fileset_.export_root.view()};
      return rpc_nfs3_fsinfo_async(rpc, on_rpc_reply, &a, p) == 0;
    }
    case OpType::kCommit: {
      COMMIT3args a{};
      a.file = fileset_.files[pick(fileset_.files.size(), rng)].fh.view();
      return rpc_nfs3_commit_async(rpc, on_rpc_reply, &a, p) == 0;
    }
  }
  return false;
}

void OpExecutor::on_rpc_reply(rpc_context*, int rpc_status, void* data, void* private_data) {
  int64_t received = monotonic_ns();
  std::unique_ptr<Pending> p(static_cast<Pending*>(private_data));
  OpExecutor& self = *p->self;
  // Every NFSv3 result begins with its nfsstat3, whatever the procedure.
  int status = (rpc_status == RPC_STATUS_SUCCESS && data) ? static_cast<int>(*static_cast<nfsstat3*>(data))
                                                          : kRpcFailure;
  if (p->op == OpType::kReaddirplus && status == NFS3_OK && self.fileset_.listing_entries > 0) {
    // A whole-directory listing goes on from the last entry's cookie until the server says EOF
    // (bounded: a server that never does is an error after twice the calls the entries need).
    const READDIRPLUS3resok& ok = static_cast<READDIRPLUS3res*>(data)->READDIRPLUS3res_u.resok;
    const entryplus3* last = nullptr;
    for (const entryplus3* e = ok.reply.entries; e; e = e->nextentry) last = e;
    if (!ok.reply.eof) {
      if (last && p->listing_calls <= 2 * self.fileset_.listing_entries + 2) {
        p->cookie = last->cookie;
        std::copy(std::begin(ok.cookieverf), std::end(ok.cookieverf), std::begin(p->verifier));
        Pending* again = p.release();
        if (self.send_readdirplus(again, self.fileset_.listing_dir)) return;
        p.reset(again);
        status = kRpcFailure;
      } else {
        status = NFS3ERR_SERVERFAULT;  // no progress: the listing would never end
      }
    }
  }
  --self.in_flight_;
  if (p->op == OpType::kCreate && status == NFS3_OK) {
    self.fileset_.dirs[p->dir].removable.push_back(std::move(p->name));
  } else if (p->op == OpType::kRemove && status != NFS3_OK && status != NFS3ERR_NOENT &&
             p->name != self.worker_tag_ + "none") {
    self.fileset_.dirs[p->dir].removable.push_back(std::move(p->name));  // still there
  }
  uint64_t bytes = 0;
  if (status == NFS3_OK && p->op == OpType::kRead) bytes = static_cast<READ3res*>(data)->READ3res_u.resok.count;
  if (status == NFS3_OK && p->op == OpType::kWrite) bytes = static_cast<WRITE3res*>(data)->WRITE3res_u.resok.count;
  self.sink_.on_reply(p->op, status, p->sent_ns, received, bytes);
}

}  // namespace nasd::bench
