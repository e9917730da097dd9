// The interconnect messages that carry NLM to a volume's owner (cluster/nlm_forwarding.h):
//
//   NlmCall request:  u32 volume | u32 proc | u16 port | u8 host length | host |
//                     u8 server length | server |
//                     u32 args length | args             (the client's NLM v4 call, as it sent it)
//   NlmCall reply:    u32 accept status | u32 results length | results  (the owner's reply body)
//   NlmClientRebooted request: u16 host length | host | u8 from length | from   (reply: empty)
//   NlmCallback request: u8 host length | host | u8 from length | from | u32 prog | u32 vers |
//                     u32 proc | u8 wants status | u32 timeout ms | u32 args length | args
//   NlmCallback reply: u8 answered | u32 status
//
// Little-endian. `host`, `server` and `from` are numeric addresses (at most kMaxAddress bytes;
// `server` and `from` may be empty: any local address); the client's caller name is at most
// kMaxCallerName bytes (NLM's LM_MAXSTRLEN); args and results at most kMaxNlmBody bytes (an NLM
// call is a file handle, two names and two netobjs of at most 1 KiB); a callback's timeout at
// most kMaxCallbackTimeoutMs. A decoder accepts the exact length only: nothing may follow the
// last field.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nasd::interconnect {

inline constexpr size_t kMaxAddress = 64;
inline constexpr size_t kMaxCallerName = 1024;
inline constexpr uint32_t kMaxNlmBody = 8192;
inline constexpr uint32_t kMaxCallbackTimeoutMs = 60000;

struct NlmCallRequest {
  uint32_t volume = 0;
  uint32_t proc = 0;
  std::string client_host;  // numeric IPv4 or IPv6
  uint16_t client_port = 0;
  std::string server_host;  // the address the client called at the forwarding node ("": any)
  std::vector<uint8_t> args;
};

struct NlmCallReply {
  uint32_t accept = 0;  // rpc::AcceptStat
  std::vector<uint8_t> results;
};

struct NlmRebootNotice {
  std::string host;  // the client's caller name (mon_name)
  std::string from;  // the address the notice came from
};

// A call back to a client that the volume's owner asks the node the client called to make
// (server/nlm/callback_call.h says why).
struct NlmCallbackRequest {
  std::string host;  // the client's numeric address
  std::string from;  // the local address to send from ("": any)
  uint32_t prog = 0, vers = 0, proc = 0;
  bool wants_status = false;
  uint32_t timeout_ms = 0;
  std::vector<uint8_t> args;
};

struct NlmCallbackReply {
  bool answered = false;
  uint32_t status = 0;
};

// Encoders return false (nothing written) when a field is over its bound.
bool encode_nlm_call(const NlmCallRequest& r, std::vector<uint8_t>* out);
bool decode_nlm_call(std::span<const uint8_t> in, NlmCallRequest* out);
bool encode_nlm_reply(const NlmCallReply& r, std::vector<uint8_t>* out);
bool decode_nlm_reply(std::span<const uint8_t> in, NlmCallReply* out);
bool encode_reboot_notice(const NlmRebootNotice& n, std::vector<uint8_t>* out);
bool decode_reboot_notice(std::span<const uint8_t> in, NlmRebootNotice* out);
bool encode_nlm_callback(const NlmCallbackRequest& r, std::vector<uint8_t>* out);
bool decode_nlm_callback(std::span<const uint8_t> in, NlmCallbackRequest* out);
void encode_nlm_callback_reply(const NlmCallbackReply& r, std::vector<uint8_t>* out);
bool decode_nlm_callback_reply(std::span<const uint8_t> in, NlmCallbackReply* out);

}  // namespace nasd::interconnect
