#include "bench/xid_streams.h"

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>

#include <random>

namespace nasd::bench {

uint32_t XidStreams::next_start() {
  // One atomic step: the race libnfs's own counter has (see the header) cannot happen here.
  return seed_ + next_.fetch_add(1, std::memory_order_relaxed) * kStride;
}

XidStreams& XidStreams::process() {
  static XidStreams streams(std::random_device{}());
  return streams;
}

void use_own_xid_stream(rpc_context* rpc) {
  rpc_set_next_xid(rpc, XidStreams::process().next_start());
}

}  // namespace nasd::bench
