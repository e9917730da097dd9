// libFuzzer target for the stripe-unit calls a peer can send (cluster/scaleout/unit_codec.h):
// every input is decoded as a request and as a reply of each op; what decodes must re-encode
// to the same bytes (the decoders accept exact lengths only), and a decoded request is run
// against a real node's drives (Put excluded, so the scratch store does not grow without end).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include "cluster/scaleout/unit_codec.h"
#include "cluster/scaleout/unit_service.h"

namespace {

using namespace nasd::scaleout;

NodeUnits* scratch_node() {
  static std::unique_ptr<NodeUnits> node = [] {
    char tmpl[] = "/tmp/nasd-unit-fuzz-XXXXXX";
    static std::string dir = mkdtemp(tmpl) ? tmpl : "/tmp/nasd-unit-fuzz";
    // Registered before the node is made, so it runs after the node is closed: each run of
    // the fuzzer leaves no drive behind in /tmp.
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    });
    std::unique_ptr<NodeUnits> n;
    std::string err;
    if (!NodeUnits::open(dir, 1, 1, 4, &n, &err)) std::abort();
    uint8_t unit[64] = {1, 2, 3};
    n->put(0, UnitKey{1, 0, 0, 0}, unit, sizeof unit);
    return n;
  }();
  return node.get();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  UnitRequest req;
  if (decode_unit_request(in, &req)) {
    std::vector<uint8_t> again = encode_unit_request(req);
    if (again.size() != size || !std::equal(again.begin(), again.end(), data)) std::abort();
    if (req.op != UnitOp::Put && req.op != UnitOp::Remove) {
      UnitReply r = UnitServer::execute(*scratch_node(), req);
      UnitReply back;
      if (!decode_unit_reply(encode_unit_reply(r), req.op, &back)) std::abort();
    }
  }
  for (uint8_t op = 1; op <= 6; ++op) {
    UnitReply reply;
    if (decode_unit_reply(in, static_cast<UnitOp>(op), &reply)) {
      std::vector<uint8_t> again = encode_unit_reply(reply);
      if (again.size() != size || !std::equal(again.begin(), again.end(), data)) std::abort();
      std::vector<UnitKey> keys;
      bool more = false;
      if (op == static_cast<uint8_t>(UnitOp::List) && decode_key_list(reply.data, kMaxListKeys, &keys, &more) &&
          encode_key_list(keys, more) != reply.data)
        std::abort();
    }
  }
  return 0;
}
