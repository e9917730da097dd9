// Where each libnfs rpc_context of this process starts numbering its calls (xids): a stream of
// its own, handed out atomically, so no two of the load generator's sessions ever send the same
// xid (short of one session making kStride calls).
//
// Why not libnfs's own start: rpc_init_context() takes it from a static counter that it reads,
// then calls getpid(), then writes back -- not atomically -- adding the coarse clock in
// milliseconds. The load threads open their sessions in lockstep, so two of them can read the
// same counter in the same millisecond and get identical xid sequences for the same target.
// Their first fileset calls are identical too (both MKDIR the shared work directory): the same
// address, xid, procedure and arguments, which the server's duplicate request cache (keyed
// without the port, so that a retransmission on a new connection is recognised:
// server/rpc/duplicate_request_cache.h) rightly takes for a retransmission of the call still
// running, and drops. The load generator never retransmits, so that call waited for a reply
// that never came (bench_e2e_cluster_forwarding: "MKDIR loadgen-...: no reply from the server
// in 10000 ms", with drc_inprogress_drops 1 on the node that dropped it).
#pragma once

#include <atomic>
#include <cstdint>

struct rpc_context;

namespace nasd::bench {

class XidStreams {
 public:
  // Calls one stream may number before it reaches the next stream's start; 4096 streams fit in
  // the 32-bit xid space before a start repeats.
  static constexpr uint32_t kStride = 1u << 20;

  // Streams start at seed, seed + kStride, seed + 2 * kStride, ... (mod 2^32).
  explicit XidStreams(uint32_t seed) : seed_(seed) {}
  // The next stream's first xid. Thread-safe: concurrent callers always get different streams.
  uint32_t next_start();

  // This process's streams, seeded at random (another load generator on this host starts
  // elsewhere, as libnfs's pid term made it).
  static XidStreams& process();

 private:
  const uint32_t seed_;
  std::atomic<uint32_t> next_{0};
};

// Gives `rpc` (just made by rpc_init_context) the next stream of XidStreams::process().
void use_own_xid_stream(rpc_context* rpc);

}  // namespace nasd::bench
