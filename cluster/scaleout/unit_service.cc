#include "cluster/scaleout/unit_service.h"

#include <memory>

namespace nasd::scaleout {

using interconnect::IncomingRequest;
using interconnect::MessageType;

UnitServer::UnitServer(NodeUnits* units, UnitServerOptions options)
    : units_(units),
      pool_({.threads = options.threads,
             .max_queued = options.max_queued,
             .at_stop = util::TaskQueue::AtStop::RunQueued,
             .room = "scaleout"}) {}

void UnitServer::attach(interconnect::InterconnectServer& server) {
  server.set_handler(MessageType::UnitCall,
                     [this](IncomingRequest request) { handle(std::move(request)); });
}

void UnitServer::handle(IncomingRequest request) {
  auto shared = std::make_shared<IncomingRequest>(std::move(request));
  const bool taken = pool_.submit([this, shared] {
    // Fenced meanwhile (a newer connection from that node): the caller gave up on it.
    interconnect::LinkSession::Call running = shared->begin();
    if (!running) return;
    UnitRequest req;
    UnitReply reply;
    if (!decode_unit_request(shared->payload, &req)) {
      // The reply must carry the op the caller expects; byte 1 is the op in every version.
      reply.op = shared->payload.size() >= 2 ? static_cast<UnitOp>(shared->payload[1]) : UnitOp::Get;
      reply.status = UnitStatus::Invalid;
    } else {
      reply = execute(*units_, req);
    }
    shared->responder.reply(encode_unit_reply(reply));
  });
  if (!taken) {
    UnitReply busy;
    busy.op = shared->payload.size() >= 2 ? static_cast<UnitOp>(shared->payload[1]) : UnitOp::Get;
    busy.status = UnitStatus::IoError;
    shared->responder.reply(encode_unit_reply(busy));
  }
}

UnitReply UnitServer::execute(NodeUnits& units, const UnitRequest& req) {
  UnitReply reply;
  reply.op = req.op;
  switch (req.op) {
    case UnitOp::Put:
      reply.status = units.put(req.drive, req.key, req.data.data(),
                               static_cast<uint32_t>(req.data.size()));
      break;
    case UnitOp::Get:
      reply.status = units.get(req.drive, req.key, &reply.data);
      if (reply.status != UnitStatus::Ok) reply.data.clear();
      break;
    case UnitOp::Remove:
      reply.status = units.remove(req.drive, req.key);
      break;
    case UnitOp::Sync:
      reply.status = units.sync(req.drive);
      break;
    case UnitOp::List: {
      const uint32_t max = req.data.size() == 4 ? uint32_t(req.data[0]) | uint32_t(req.data[1]) << 8 |
                                                      uint32_t(req.data[2]) << 16 | uint32_t(req.data[3]) << 24
                                                : 0;
      std::vector<UnitKey> keys;
      bool more = false;
      reply.status = units.list(req.drive, req.key, max, &keys, &more);
      if (reply.status == UnitStatus::Ok) reply.data = encode_key_list(keys, more);
      break;
    }
    case UnitOp::Health:
      for (uint32_t i = 0; i < units.drive_count() && i < kMaxDrivesPerNode; ++i) {
        reply.data.push_back(units.drive_healthy(i) ? 1 : 0);
      }
      reply.status = UnitStatus::Ok;
      break;
  }
  return reply;
}

RemoteUnits::RemoteUnits(NodeUnits* local, std::chrono::milliseconds timeout)
    : local_(local), timeout_(timeout) {}

void RemoteUnits::add_peer(uint32_t node, interconnect::CallChannel* channel) {
  std::lock_guard<std::mutex> lock(mu_);
  peers_[node] = channel;
}

UnitReply RemoteUnits::call(uint32_t node, UnitRequest request) {
  UnitReply reply;
  reply.op = request.op;
  reply.status = UnitStatus::Unreachable;
  if (local_ && node == local_->node()) return UnitServer::execute(*local_, request);
  interconnect::CallChannel* channel = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = peers_.find(node);
    if (it != peers_.end()) channel = it->second;
  }
  if (!channel) return reply;
  const UnitOp op = request.op;
  interconnect::CallOutcome out =
      channel->call(MessageType::UnitCall, encode_unit_request(request), timeout_);
  if (!out.ok()) return reply;
  UnitReply decoded;
  if (!decode_unit_reply(out.payload, op, &decoded)) {
    reply.status = UnitStatus::IoError;  // a malformed answer: never trust its bytes
    return reply;
  }
  return decoded;
}

UnitStatus RemoteUnits::put(const UnitPlace& at, const UnitKey& key, const uint8_t* data,
                            uint32_t len) {
  if (len > kMaxUnitBytes) return UnitStatus::Invalid;
  UnitRequest r{UnitOp::Put, static_cast<uint16_t>(at.drive), key, {data, data + len}};
  return call(at.node, std::move(r)).status;
}

UnitStatus RemoteUnits::get(const UnitPlace& at, const UnitKey& key, std::vector<uint8_t>* out) {
  UnitReply reply = call(at.node, UnitRequest{UnitOp::Get, static_cast<uint16_t>(at.drive), key, {}});
  if (reply.status == UnitStatus::Ok) *out = std::move(reply.data);
  return reply.status;
}

UnitStatus RemoteUnits::remove(const UnitPlace& at, const UnitKey& key) {
  return call(at.node, UnitRequest{UnitOp::Remove, static_cast<uint16_t>(at.drive), key, {}}).status;
}

UnitStatus RemoteUnits::sync(const UnitPlace& at) {
  return call(at.node, UnitRequest{UnitOp::Sync, static_cast<uint16_t>(at.drive), {}, {}}).status;
}

UnitStatus RemoteUnits::list(const UnitPlace& at, const UnitKey& from, uint32_t max,
                             std::vector<UnitKey>* out, bool* more) {
  out->clear();
  *more = false;
  if (max == 0 || max > kMaxListKeys) return UnitStatus::Invalid;
  UnitRequest r{UnitOp::List, static_cast<uint16_t>(at.drive), from,
                {uint8_t(max), uint8_t(max >> 8), uint8_t(max >> 16), uint8_t(max >> 24)}};
  UnitReply reply = call(at.node, std::move(r));
  if (reply.status != UnitStatus::Ok) return reply.status;
  if (!decode_key_list(reply.data, max, out, more)) return UnitStatus::IoError;
  return UnitStatus::Ok;
}

std::vector<bool> RemoteUnits::health(uint32_t node) {
  UnitReply reply = call(node, UnitRequest{UnitOp::Health, 0, {}, {}});
  std::vector<bool> out;
  if (reply.status != UnitStatus::Ok) return out;
  for (uint8_t b : reply.data) out.push_back(b != 0);
  return out;
}

}  // namespace nasd::scaleout
