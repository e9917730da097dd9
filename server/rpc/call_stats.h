// Per-procedure call statistics and transport counters, cheap enough to update on every call
// from every thread: relaxed atomics in cache-line-aligned slots, no locks. The procedure
// tables are declared before the server starts and never change shape afterwards, so readers
// and writers need no synchronisation beyond the atomics themselves.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nasd::rpc {

// Latency bucket i holds calls of [2^i, 2^(i+1)) microseconds (bucket 0 also holds 0 us).
inline constexpr size_t kLatencyBuckets = 32;

enum class TransportCounter : size_t {
  ConnectionsAccepted,
  ConnectionsClosed,
  AcceptErrors,
  TcpRecords,
  UdpDatagrams,
  BadRecords,        // too short to hold a call header, or not a call
  OversizedRecords,  // over max_record: the connection was closed
  UdpDropped,        // datagrams dropped because too many UDP calls were in flight
  DrcHits,           // retransmissions answered from the duplicate request cache
  DrcInProgressDrops,  // retransmissions dropped while the original was executing
  RpcMismatch,
  AuthErrors,
  ProgUnavail,
  ProgMismatch,
  ProcUnavail,
  RepliesSent,
  BytesReceived,
  BytesSent,
  ShortWrites,  // sendmsg wrote less than queued: the rest followed in a later send
  kCount,
};
inline constexpr size_t kTransportCounters = static_cast<size_t>(TransportCounter::kCount);
std::string_view transport_counter_name(TransportCounter c);

struct ProcSnapshot {
  std::string name;
  uint64_t calls = 0, errors = 0, latency_sum_us = 0;
  // Argument bytes of the calls and result bytes of their replies (RPC headers excluded): for
  // WRITE the data written plus its small argument header, for READ the data read plus its
  // attributes.
  uint64_t request_bytes = 0, reply_bytes = 0;
  std::array<uint64_t, kLatencyBuckets> buckets{};

  double mean_us() const { return calls ? double(latency_sum_us) / double(calls) : 0.0; }
  // Estimated from the histogram by linear interpolation inside the bucket; q in [0, 1].
  double percentile_us(double q) const;
};

struct ProgramSnapshot {
  uint32_t prog = 0, vers = 0;
  std::string name;
  std::vector<ProcSnapshot> procs;
};

struct StatsSnapshot {
  std::vector<ProgramSnapshot> programs;
  std::array<uint64_t, kTransportCounters> transport{};
  int64_t open_connections = 0;
  uint64_t counter(TransportCounter c) const { return transport[static_cast<size_t>(c)]; }
};

class CallStats {
 public:
  CallStats();
  ~CallStats();
  CallStats(const CallStats&) = delete;
  CallStats& operator=(const CallStats&) = delete;

  // Declares the procedures of one program version. Only before calls are recorded.
  void add_program(uint32_t prog, uint32_t vers, std::string name,
                   std::vector<std::string> proc_names);

  // Records one call answered by a service. Undeclared procedures are ignored (they were
  // rejected before reaching a service and are counted as transport counters instead).
  void record_call(uint32_t prog, uint32_t vers, uint32_t proc, bool error,
                   std::chrono::microseconds latency, uint64_t request_bytes = 0,
                   uint64_t reply_bytes = 0);
  void count(TransportCounter c, uint64_t n = 1) {
    transport_[static_cast<size_t>(c)].value.fetch_add(n, std::memory_order_relaxed);
  }
  uint64_t counter(TransportCounter c) const {
    return transport_[static_cast<size_t>(c)].value.load(std::memory_order_relaxed);
  }

  // A gauge rather than a counter, so reset() leaves it alone.
  void connection_opened() { open_connections_.fetch_add(1, std::memory_order_relaxed); }
  void connection_closed() { open_connections_.fetch_sub(1, std::memory_order_relaxed); }

  StatsSnapshot snapshot() const;
  // Zeroes every counter (concurrent updates may land on either side of the reset).
  void reset();

 private:
  struct alignas(64) ProcSlot {
    std::atomic<uint64_t> calls{0}, errors{0}, latency_sum_us{0}, request_bytes{0}, reply_bytes{0};
    std::array<std::atomic<uint64_t>, kLatencyBuckets> buckets{};
  };
  struct Table {
    uint32_t prog, vers;
    std::string name;
    std::vector<std::string> proc_names;
    std::unique_ptr<ProcSlot[]> slots;
  };
  struct alignas(64) CounterSlot {
    std::atomic<uint64_t> value{0};
  };

  std::vector<Table> tables_;
  std::array<CounterSlot, kTransportCounters> transport_;
  std::atomic<int64_t> open_connections_{0};
};

size_t latency_bucket(uint64_t micros);

}  // namespace nasd::rpc
