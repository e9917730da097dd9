// The messages between nasd-loadgen's coordinator and its agents (the load-generating hosts of
// a many-host run), and their encoding. Pure: no sockets, no clocks (agent_channel.h frames and
// authenticates them; agent_server.h and coordinator.h act on them).
//
// The coordinator asks, an agent answers, strictly in turn:
//
//   Prepare  (targets, processes, mix, sizes, fileset plan) -> Prepared (FSSTAT/FSINFO per target,
//                                                              bytes the fileset will need)
//   Build                                                   -> Built    (bytes made, seconds)
//   ClockProbe (nonce)                                      -> ClockReply (the agent's monotonic now)
//   Step (index, start on the agent's clock, warmup, measured time, ops/s) -> StepDone (the
//                                                              step's counters and histograms)
//   Finish (cleanup?)                                       -> Finished (cleanup error, if any)
//   any request                                             -> Error (why it was refused)
//
// An agent never runs anything but these load steps: there is no message that names a program,
// a path outside the export's workdir, or a shell word. Every field is bounded and validated by
// the decoder before anything is sized from it or acted on (a length above its bound, a count
// that does not add up, a number out of range, trailing bytes: the message is refused), so an
// agent acts only on parameters a command-line run would also accept.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bench/fileset_plan.h"
#include "bench/server_facts.h"
#include "bench/op_type.h"
#include "bench/stats.h"

namespace nasd::bench::agent {

inline constexpr size_t kMaxMessageBytes = 1 << 20;  // a StepDone with 14 full histograms is ~250 KB
inline constexpr size_t kMaxTargets = 64;
inline constexpr size_t kMaxTargetText = 1024;
inline constexpr size_t kMaxText = 4096;             // error and failure texts
inline constexpr size_t kMaxNameText = 255;          // workdir, mix name
inline constexpr size_t kMaxSizeBuckets = 64;
inline constexpr size_t kMaxStatuses = 64;           // distinct NFS error statuses per procedure
inline constexpr uint32_t kMaxProcesses = 1024;
inline constexpr int64_t kMaxStepNs = int64_t{1000000} * 1000000000;  // 10^6 s

enum class MessageType : uint8_t {
  kPrepare = 1,
  kPrepared = 2,
  kBuild = 3,
  kBuilt = 4,
  kClockProbe = 5,
  kClockReply = 6,
  kStep = 7,
  kStepDone = 8,
  kFinish = 9,
  kFinished = 10,
  kError = 11,
};

// Everything an agent needs to mount its targets and build its part of the fileset.
struct Prepare {
  uint32_t agent_index = 0;       // this agent's place in the hosts file (0-based)
  uint32_t agents = 1;
  std::vector<std::string> targets;  // each parses with parse_target()
  std::string workdir;            // one path component, this agent's own
  uint32_t processes = 1;
  uint32_t max_in_flight = 64;
  uint32_t io_size = 32768;
  uint32_t timeout_ms = 10000;
  uint64_t seed = 1;
  std::string mix_name;
  std::array<double, kOpTypeCount> mix_percent{};
  uint32_t files_per_dir = 30;
  double mib_per_op = 120;
  double peak_ops = 1;            // the highest rate this agent will be asked for
  std::vector<FileSizeBucket> file_sizes;
};

struct Prepared {
  std::vector<ServerFacts> facts;  // one per target, in Prepare order
  uint64_t fileset_bytes_per_target = 0;  // all of this agent's processes, on one target
};

struct Built {
  uint64_t fileset_bytes = 0;
  double build_seconds = 0;
};

struct ClockProbe {
  uint64_t nonce = 0;
};

struct ClockReply {
  uint64_t nonce = 0;
  int64_t agent_now_ns = 0;  // the agent's monotonic clock when it answered
};

struct Step {
  uint32_t index = 0;
  int64_t start_ns = 0;      // on the agent's monotonic clock: when the warmup begins
  int64_t warmup_ns = 0;
  int64_t measure_ns = 0;
  double ops_per_sec = 0;    // this agent's share of the step's load
};

struct StepDone {
  uint32_t index = 0;
  int64_t first_issue_ns = 0;  // agent clock: the first request of the step (0: none sent)
  uint64_t refused = 0;
  std::string failure;         // "" unless a process lost its connection: the run is invalid
  StepStats stats;
};

struct Finish {
  bool cleanup = false;
};

struct Finished {
  std::string cleanup_error;
};

struct Error {
  std::string message;
};

// Encoders: the message type byte, then the fields (util/byte_io.h, little-endian).
std::vector<uint8_t> encode(const Prepare& m);
std::vector<uint8_t> encode(const Prepared& m);
std::vector<uint8_t> encode_build();
std::vector<uint8_t> encode(const Built& m);
std::vector<uint8_t> encode(const ClockProbe& m);
std::vector<uint8_t> encode(const ClockReply& m);
std::vector<uint8_t> encode(const Step& m);
std::vector<uint8_t> encode(const StepDone& m);
std::vector<uint8_t> encode(const Finish& m);
std::vector<uint8_t> encode(const Finished& m);
std::vector<uint8_t> encode(const Error& m);

// The type of a message (its first byte), or false for an empty message or an unknown type.
bool peek_type(std::span<const uint8_t> message, MessageType* type);

// Decoders: true and *out filled, or false with *error naming the first bad field. Each checks
// the type byte, every bound above, and that nothing follows the last field.
bool decode(std::span<const uint8_t> in, Prepare* out, std::string* error);
bool decode(std::span<const uint8_t> in, Prepared* out, std::string* error);
bool decode_build(std::span<const uint8_t> in, std::string* error);
bool decode(std::span<const uint8_t> in, Built* out, std::string* error);
bool decode(std::span<const uint8_t> in, ClockProbe* out, std::string* error);
bool decode(std::span<const uint8_t> in, ClockReply* out, std::string* error);
bool decode(std::span<const uint8_t> in, Step* out, std::string* error);
bool decode(std::span<const uint8_t> in, StepDone* out, std::string* error);
bool decode(std::span<const uint8_t> in, Finish* out, std::string* error);
bool decode(std::span<const uint8_t> in, Finished* out, std::string* error);
bool decode(std::span<const uint8_t> in, Error* out, std::string* error);

}  // namespace nasd::bench::agent
