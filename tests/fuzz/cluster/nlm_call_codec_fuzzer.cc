// libFuzzer target for the NLM messages a peer node can send (cluster/interconnect/
// nlm_call_codec.h): every input is decoded as a forwarded call, its reply, a reboot notice, a
// callback to make and that callback's reply;
// what decodes must keep within the bounds and re-encode to the same bytes (the decoders accept
// exact lengths only).
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <span>
#include <vector>

#include "cluster/interconnect/nlm_call_codec.h"

using namespace nasd::interconnect;

namespace {

void same(const std::vector<uint8_t>& encoded, std::span<const uint8_t> in) {
  if (encoded.size() != in.size() || !std::equal(encoded.begin(), encoded.end(), in.begin()))
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  NlmCallRequest call;
  if (decode_nlm_call(in, &call)) {
    if (call.client_host.size() > kMaxAddress || call.server_host.size() > kMaxAddress ||
        call.args.size() > kMaxNlmBody)
      std::abort();
    std::vector<uint8_t> out;
    if (!encode_nlm_call(call, &out)) std::abort();
    same(out, in);
  }
  NlmCallReply reply;
  if (decode_nlm_reply(in, &reply)) {
    if (reply.results.size() > kMaxNlmBody) std::abort();
    std::vector<uint8_t> out;
    if (!encode_nlm_reply(reply, &out)) std::abort();
    same(out, in);
  }
  NlmRebootNotice notice;
  if (decode_reboot_notice(in, &notice)) {
    if (notice.host.size() > kMaxCallerName || notice.from.size() > kMaxAddress) std::abort();
    std::vector<uint8_t> out;
    if (!encode_reboot_notice(notice, &out)) std::abort();
    same(out, in);
  }
  NlmCallbackRequest callback;
  if (decode_nlm_callback(in, &callback)) {
    if (callback.host.size() > kMaxAddress || callback.from.size() > kMaxAddress ||
        callback.timeout_ms > kMaxCallbackTimeoutMs || callback.args.size() > kMaxNlmBody)
      std::abort();
    std::vector<uint8_t> out;
    if (!encode_nlm_callback(callback, &out)) std::abort();
    same(out, in);
  }
  NlmCallbackReply answered;
  if (decode_nlm_callback_reply(in, &answered)) {
    std::vector<uint8_t> out;
    encode_nlm_callback_reply(answered, &out);
    same(out, in);
  }
  return 0;
}
