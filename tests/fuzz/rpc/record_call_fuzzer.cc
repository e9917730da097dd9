// libFuzzer target: arbitrary bytes as a TCP stream through the record reassembler, each
// completed record through the call header decoder, and a reply encoded for the outcome --
// the path every untrusted byte takes before any service sees it. The first input byte picks
// how the stream is cut into recv() chunks so that fragment boundaries land everywhere. Longer
// records are assembled in page runs with a payload placed where their bytes say.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "server/rpc/call_header.h"
#include "server/rpc/record_marking.h"

namespace {

constexpr size_t kFuzzMaxRecord = 64 * 1024;

void exercise_record(std::span<const uint8_t> record) {
  using namespace nasd::rpc;
  DecodedCall d = decode_call_header(record);
  EncodedReply reply;
  switch (d.status) {
    case CallHeaderStatus::Malformed:
      return;
    case CallHeaderStatus::RpcVersionMismatch:
      reply = encode_rpc_mismatch_reply(d.call.xid);
      break;
    case CallHeaderStatus::AuthError:
      reply = encode_auth_error_reply(d.call.xid, d.auth_stat);
      break;
    case CallHeaderStatus::Ok: {
      // Invariants the dispatcher relies on.
      if (d.args_offset > record.size()) __builtin_trap();
      if (d.call.cred.machine.size() > kMaxMachineName) __builtin_trap();
      if (d.call.cred.gids.size() > kMaxAuthSysGids) __builtin_trap();
      std::vector<uint8_t> args(record.begin() + d.args_offset, record.end());
      reply = encode_accepted_reply(d.call.xid, AcceptStat::Success, std::move(args));
      break;
    }
  }
  if (reply.head_len < 8 || reply.head_len > reply.head.size()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t chunk = size_t{data[0]} + 1;
  std::span<const uint8_t> stream(data + 1, size - 1);
  // Records of 64 bytes or more go through a payload locator as a large WRITE would: placed in
  // a page run at an offset the record's own bytes choose.
  auto locator = [](std::span<const uint8_t> head) -> std::optional<size_t> {
    const nasd::rpc::DecodedCall d = nasd::rpc::decode_call_header(head);
    if (d.status != nasd::rpc::CallHeaderStatus::Ok) return std::nullopt;
    return d.args_offset + (d.args_offset < head.size() ? head[d.args_offset] : 0);
  };
  nasd::rpc::RecordReassembler reassembler(kFuzzMaxRecord, locator, 64);
  // Odd chunk sizes also take the transport's receive-in-place path (body_window) whenever a
  // fragment announces a long enough rest.
  const bool in_place = (data[0] & 1) != 0;
  for (size_t pos = 0; pos < stream.size();) {
    size_t n = std::min(chunk, stream.size() - pos);
    std::span<uint8_t> window = in_place ? reassembler.body_window(16) : std::span<uint8_t>{};
    if (!window.empty()) {
      n = std::min(n, window.size());
      std::copy_n(stream.data() + pos, n, window.data());
      reassembler.body_received(n);
    } else if (!reassembler.feed(stream.subspan(pos, n))) {
      break;
    }
    pos += n;
    while (reassembler.has_record()) exercise_record(reassembler.pop_record());
  }
  // The same bytes as a UDP datagram: one call, no record marking.
  exercise_record(stream);
  return 0;
}
