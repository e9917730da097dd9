// Sends one NFS procedure of a given type at a randomly chosen object of a worker's fileset and
// reports the reply. Each call is a single raw libnfs rpc_nfs3_*_async call, so what is counted
// is exactly what the server executed.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "bench/fileset.h"
#include "bench/nfs_session.h"
#include "bench/op_type.h"

namespace nasd::bench {

class ReplySink {
 public:
  virtual ~ReplySink() = default;
  // `status` is the reply's nfsstat3 (0 = NFS3_OK) or kRpcFailure; times are monotonic_ns().
  // `bytes` is the payload a successful READ or WRITE moved (its reply's count), else 0.
  virtual void on_reply(OpType op, int status, int64_t sent_ns, int64_t received_ns, uint64_t bytes) = 0;
};

struct ExecutorOptions {
  uint32_t io_size = 32768;     // READ/WRITE transfer size, capped by the server's rtmax/wtmax
  bool unstable_writes = false; // UNSTABLE when the mix has COMMIT to make them stable, else FILE_SYNC
  // READ/WRITE walk the worker's files front to back, one transfer after the other (a streaming
  // client), instead of a random transfer-aligned offset in a random file.
  bool sequential = false;
  // A REMOVE that finds no name left to take is sent as a CREATE instead (counted as one), so a
  // CREATE/REMOVE micro-benchmark whose random draws run the pool dry measures successful calls.
  // Off: the REMOVE goes out anyway and fails with NFS3ERR_NOENT, as SPECsfs-style runs expect.
  bool create_when_nothing_to_remove = false;
};

class OpExecutor {
 public:
  OpExecutor(NfsSession& session, Fileset& fileset, ReplySink& sink, const ExecutorOptions& options,
             size_t worker_id);

  // Queues the request; false when libnfs refused it (no reply will come).
  // When the fileset has a listing directory, a READDIRPLUS lists all of it: the executor follows
  // the cookies call after call until EOF and reports one reply for the whole listing (latency
  // from the first call to the last reply), so servers that fit different numbers of entries in
  // a reply are compared per listing, not per call.
  bool issue(OpType op, std::mt19937_64& rng);
  size_t in_flight() const { return in_flight_; }

 private:
  struct Pending;
  static void on_rpc_reply(rpc_context* rpc, int status, void* data, void* private_data);
  bool send(Pending* p, OpType op, std::mt19937_64& rng);
  bool send_readdirplus(Pending* p, const FileHandle& dir);
  const FilesetFile& next_sequential(uint32_t* count, uint64_t* offset);
  size_t pick(size_t n, std::mt19937_64& rng) const;
  const FileHandle& any_object(std::mt19937_64& rng) const;
  uint64_t pick_offset(uint64_t size, uint32_t count, std::mt19937_64& rng) const;

  NfsSession& session_;
  Fileset& fileset_;
  ReplySink& sink_;
  ExecutorOptions options_;
  std::string worker_tag_;
  std::string write_buffer_;
  uint64_t created_ = 0;
  size_t in_flight_ = 0;
  uint32_t mode_flip_ = 0;
  size_t seq_file_ = 0;     // sequential access: the file and offset of the next transfer
  uint64_t seq_offset_ = 0;
};

}  // namespace nasd::bench
