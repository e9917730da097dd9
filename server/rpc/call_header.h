// The RPC message header (RFC 5531 section 9): decoding a call into a CallContext and encoding
// the reply header around a service's results. Pure functions over byte buffers, so the
// transport, the tests and the fuzzer all exercise exactly the same code.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "server/rpc/service.h"

namespace nasd::rpc {

inline constexpr uint32_t kRpcVersion = 2;
inline constexpr uint32_t kMaxAuthBytes = 400;     // opaque_auth body<400>
inline constexpr uint32_t kMaxMachineName = 255;   // authsys_parms machinename<255>
inline constexpr uint32_t kMaxAuthSysGids = 16;    // authsys_parms gids<16>

enum class CallHeaderStatus {
  Ok,                  // `call` is complete, arguments start at args_offset
  Malformed,           // not a decodable call header: no reply is possible or useful
  RpcVersionMismatch,  // reply MSG_DENIED / RPC_MISMATCH (only `call.xid` is valid)
  AuthError,           // reply MSG_DENIED / AUTH_ERROR with `auth_stat`
};

struct DecodedCall {
  CallHeaderStatus status = CallHeaderStatus::Malformed;
  AuthStat auth_stat = AuthStat::Ok;
  CallContext call;  // transport fields (peer, tcp, local_port) are left for the caller
  size_t args_offset = 0;
};

// Decodes the header of one call record (without record mark). Never throws; any byte
// sequence yields one of the statuses above.
DecodedCall decode_call_header(std::span<const uint8_t> record);

// A reply ready to be sent: a small header followed by the service's results, kept apart so
// that results are never copied (sent with a two-element iovec). The header begins with the
// 4-byte TCP record mark; a UDP datagram starts after it. Immutable once built, so one reply
// can be shared by the duplicate request cache and the send queues.
struct EncodedReply {
  std::array<uint8_t, 40> head{};
  uint32_t head_len = 0;  // including the record mark
  std::vector<uint8_t> body;
  // Sent after `body` without having been copied into it (a READ's data, DispatchResult::tail,
  // possibly pinned cache blocks: releasing the reply releases them). Only READ replies have
  // one, and READ is not kept by the duplicate request cache.
  util::ByteSlices tail;
  // Made by spare_reply() (reply_pool.h), so it may be reused once sent; a reply made any other
  // way (possibly as a const object) never is.
  bool pooled = false;

  std::span<const uint8_t> tcp_head() const { return {head.data(), head_len}; }
  std::span<const uint8_t> udp_head() const { return {head.data() + 4, head_len - 4}; }
  size_t message_size() const { return head_len - 4 + body.size() + tail.size(); }  // no mark
  size_t tcp_size() const { return head_len + body.size() + tail.size(); }
};

// MSG_ACCEPTED with an AUTH_NONE verifier. `results` is carried only for Success; the
// mismatch range only for ProgMismatch.
EncodedReply encode_accepted_reply(uint32_t xid, AcceptStat stat, std::vector<uint8_t> results,
                                   uint32_t low_version = 0, uint32_t high_version = 0);
// MSG_DENIED / RPC_MISMATCH announcing that only RPC version 2 is spoken.
EncodedReply encode_rpc_mismatch_reply(uint32_t xid);
// MSG_DENIED / AUTH_ERROR.
EncodedReply encode_auth_error_reply(uint32_t xid, AuthStat why);
// The reply for what Service::dispatch returned.
EncodedReply encode_dispatch_reply(uint32_t xid, DispatchResult result,
                                   std::vector<uint8_t> results);

}  // namespace nasd::rpc
