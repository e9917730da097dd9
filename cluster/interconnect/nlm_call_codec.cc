#include "cluster/interconnect/nlm_call_codec.h"

namespace nasd::interconnect {
namespace {

void put(std::vector<uint8_t>* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// An address: u8 length, then its bytes (the caller checked it is at most kMaxAddress).
void put_text(std::vector<uint8_t>* out, const std::string& s) {
  put(out, s.size(), 1);
  out->insert(out->end(), s.begin(), s.end());
}

// Reads fields front to back; any read past the end fails the whole decode.
struct Reader {
  std::span<const uint8_t> in;
  size_t at = 0;
  bool ok = true;

  uint64_t get(int bytes) {
    if (!ok || in.size() - at < static_cast<size_t>(bytes)) {
      ok = false;
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= uint64_t{in[at + i]} << (8 * i);
    at += bytes;
    return v;
  }
  bool bytes(size_t n, size_t max, std::string* s) {
    if (!ok || n > max || in.size() - at < n) return ok = false;
    s->assign(reinterpret_cast<const char*>(in.data() + at), n);
    at += n;
    return true;
  }
  bool bytes(size_t n, size_t max, std::vector<uint8_t>* v) {
    if (!ok || n > max || in.size() - at < n) return ok = false;
    v->assign(in.begin() + at, in.begin() + at + n);
    at += n;
    return true;
  }
  bool done() const { return ok && at == in.size(); }
};

}  // namespace

bool encode_nlm_call(const NlmCallRequest& r, std::vector<uint8_t>* out) {
  if (r.client_host.size() > kMaxAddress || r.server_host.size() > kMaxAddress ||
      r.args.size() > kMaxNlmBody)
    return false;
  put(out, r.volume, 4);
  put(out, r.proc, 4);
  put(out, r.client_port, 2);
  put_text(out, r.client_host);
  put_text(out, r.server_host);
  put(out, r.args.size(), 4);
  out->insert(out->end(), r.args.begin(), r.args.end());
  return true;
}

bool decode_nlm_call(std::span<const uint8_t> in, NlmCallRequest* out) {
  Reader r{in};
  out->volume = static_cast<uint32_t>(r.get(4));
  out->proc = static_cast<uint32_t>(r.get(4));
  out->client_port = static_cast<uint16_t>(r.get(2));
  r.bytes(r.get(1), kMaxAddress, &out->client_host);
  r.bytes(r.get(1), kMaxAddress, &out->server_host);
  r.bytes(r.get(4), kMaxNlmBody, &out->args);
  return r.done();
}

bool encode_nlm_reply(const NlmCallReply& r, std::vector<uint8_t>* out) {
  if (r.results.size() > kMaxNlmBody) return false;
  put(out, r.accept, 4);
  put(out, r.results.size(), 4);
  out->insert(out->end(), r.results.begin(), r.results.end());
  return true;
}

bool decode_nlm_reply(std::span<const uint8_t> in, NlmCallReply* out) {
  Reader r{in};
  out->accept = static_cast<uint32_t>(r.get(4));
  r.bytes(r.get(4), kMaxNlmBody, &out->results);
  return r.done();
}

bool encode_reboot_notice(const NlmRebootNotice& n, std::vector<uint8_t>* out) {
  if (n.host.size() > kMaxCallerName || n.from.size() > kMaxAddress) return false;
  put(out, n.host.size(), 2);
  out->insert(out->end(), n.host.begin(), n.host.end());
  put(out, n.from.size(), 1);
  out->insert(out->end(), n.from.begin(), n.from.end());
  return true;
}

bool decode_reboot_notice(std::span<const uint8_t> in, NlmRebootNotice* out) {
  Reader r{in};
  r.bytes(r.get(2), kMaxCallerName, &out->host);
  r.bytes(r.get(1), kMaxAddress, &out->from);
  return r.done();
}

bool encode_nlm_callback(const NlmCallbackRequest& r, std::vector<uint8_t>* out) {
  if (r.host.size() > kMaxAddress || r.from.size() > kMaxAddress ||
      r.timeout_ms > kMaxCallbackTimeoutMs || r.args.size() > kMaxNlmBody)
    return false;
  put_text(out, r.host);
  put_text(out, r.from);
  put(out, r.prog, 4);
  put(out, r.vers, 4);
  put(out, r.proc, 4);
  put(out, r.wants_status ? 1 : 0, 1);
  put(out, r.timeout_ms, 4);
  put(out, r.args.size(), 4);
  out->insert(out->end(), r.args.begin(), r.args.end());
  return true;
}

bool decode_nlm_callback(std::span<const uint8_t> in, NlmCallbackRequest* out) {
  Reader r{in};
  r.bytes(r.get(1), kMaxAddress, &out->host);
  r.bytes(r.get(1), kMaxAddress, &out->from);
  out->prog = static_cast<uint32_t>(r.get(4));
  out->vers = static_cast<uint32_t>(r.get(4));
  out->proc = static_cast<uint32_t>(r.get(4));
  uint64_t wants = r.get(1);
  out->wants_status = wants == 1;
  out->timeout_ms = static_cast<uint32_t>(r.get(4));
  r.bytes(r.get(4), kMaxNlmBody, &out->args);
  return r.done() && wants <= 1 && out->timeout_ms <= kMaxCallbackTimeoutMs;
}

void encode_nlm_callback_reply(const NlmCallbackReply& r, std::vector<uint8_t>* out) {
  put(out, r.answered ? 1 : 0, 1);
  put(out, r.status, 4);
}

bool decode_nlm_callback_reply(std::span<const uint8_t> in, NlmCallbackReply* out) {
  Reader r{in};
  uint64_t answered = r.get(1);
  out->answered = answered == 1;
  out->status = static_cast<uint32_t>(r.get(4));
  return r.done() && answered <= 1;
}

}  // namespace nasd::interconnect
