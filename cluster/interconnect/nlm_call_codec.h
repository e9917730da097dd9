// The interconnect messages that carry NLM to a volume's owner (cluster/nlm_forwarding.h):
//
//   NlmCall request:  u32 volume | u32 proc | u16 port | u8 host length | host |
//                     u32 args length | args             (the client's NLM v4 call, as it sent it)
//   NlmCall reply:    u32 accept status | u32 results length | results  (the owner's reply body)
//   NlmClientRebooted request: u16 host length | host | u8 from length | from   (reply: empty)
//
// Little-endian. `host` and `from` are numeric addresses (at most kMaxAddress bytes); the
// client's caller name is at most kMaxCallerName bytes (NLM's LM_MAXSTRLEN); args and results
// at most kMaxNlmBody bytes (an NLM call is a file handle, two names and two netobjs of at most
// 1 KiB). A decoder accepts the exact length only: nothing may follow the last field.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nasd::interconnect {

inline constexpr size_t kMaxAddress = 64;
inline constexpr size_t kMaxCallerName = 1024;
inline constexpr uint32_t kMaxNlmBody = 8192;

struct NlmCallRequest {
  uint32_t volume = 0;
  uint32_t proc = 0;
  std::string client_host;  // numeric IPv4 or IPv6
  uint16_t client_port = 0;
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

// Encoders return false (nothing written) when a field is over its bound.
bool encode_nlm_call(const NlmCallRequest& r, std::vector<uint8_t>* out);
bool decode_nlm_call(std::span<const uint8_t> in, NlmCallRequest* out);
bool encode_nlm_reply(const NlmCallReply& r, std::vector<uint8_t>* out);
bool decode_nlm_reply(std::span<const uint8_t> in, NlmCallReply* out);
bool encode_reboot_notice(const NlmRebootNotice& n, std::vector<uint8_t>* out);
bool decode_reboot_notice(std::span<const uint8_t> in, NlmRebootNotice* out);

}  // namespace nasd::interconnect
