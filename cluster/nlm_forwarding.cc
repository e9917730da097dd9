#include "cluster/nlm_forwarding.h"

#include "cluster/interconnect/nlm_call_codec.h"
#include "server/nfs/mount/mount_service.h"
#include "util/net.h"

namespace nasd::cluster {
namespace {

class NoFurther : public nlm::LockForwarder {
 public:
  std::optional<rpc::AcceptStat> forward(uint32_t, const rpc::CallContext&,
                                         std::span<const uint8_t>,
                                         std::vector<uint8_t>*) override {
    return std::nullopt;
  }
  void client_rebooted(const std::string&, const std::string&) override {}
};

}  // namespace

NlmForwarding::NlmForwarding(std::string local_node, Links links, std::chrono::milliseconds timeout)
    : local_node_(std::move(local_node)),
      links_(std::move(links)),
      timeout_(timeout),
      pool_({.threads = 2, .max_queued = 1024, .at_stop = util::TaskQueue::AtStop::DropQueued,
             .room = "nlm"}) {}

NlmForwarding::~NlmForwarding() { stop(); }

void NlmForwarding::stop() { pool_.stop(); }

std::shared_ptr<nlm::LockForwarder> NlmForwarding::no_further() {
  return std::make_shared<NoFurther>();
}

std::optional<rpc::AcceptStat> NlmForwarding::forward(uint32_t volume, const rpc::CallContext& call,
                                                      std::span<const uint8_t> args,
                                                      std::vector<uint8_t>* results) {
  std::optional<std::string> owner = links_.owner(volume);
  if (!owner || owner->empty() || *owner == local_node_) return std::nullopt;
  std::shared_ptr<interconnect::CallChannel> channel = links_.channel(*owner);
  if (!channel) return std::nullopt;
  interconnect::NlmCallRequest request;
  request.volume = volume;
  request.proc = call.proc;
  request.client_host = nfs::peer_host(call.peer);
  request.client_port = util::socket_address_of(call.peer, call.peer_len).port();
  // Where the owner's callbacks to this client must come from.
  request.server_host = nlm::called_address(call);
  request.args.assign(args.begin(), args.end());
  std::vector<uint8_t> payload;
  if (!interconnect::encode_nlm_call(request, &payload)) return std::nullopt;
  interconnect::CallOutcome outcome =
      channel->call(interconnect::MessageType::NlmCall, std::move(payload), timeout_);
  interconnect::NlmCallReply reply;
  if (!outcome.ok() || !interconnect::decode_nlm_reply(outcome.payload, &reply)) return std::nullopt;
  if (reply.accept > static_cast<uint32_t>(rpc::AcceptStat::SystemErr)) return std::nullopt;
  // The owner's pool was full or stopping: it ran nothing, so the client may retry.
  if (reply.accept == static_cast<uint32_t>(rpc::AcceptStat::SystemErr) && reply.results.empty())
    return std::nullopt;
  results->insert(results->end(), reply.results.begin(), reply.results.end());
  return static_cast<rpc::AcceptStat>(reply.accept);
}

void NlmForwarding::client_rebooted(const std::string& host, const std::string& from_address) {
  std::vector<uint8_t> payload;
  if (!interconnect::encode_reboot_notice({host, from_address}, &payload)) return;
  for (const std::string& peer : links_.peers()) {
    std::shared_ptr<interconnect::CallChannel> channel = links_.channel(peer);
    if (!channel) continue;
    // Not waited for: a peer that is down holds no locks, and one that comes back after a
    // takeover elsewhere has none either (its volumes' clients reclaim at their new owner).
    channel->call_async(interconnect::MessageType::NlmClientRebooted, payload, timeout_,
                        [](interconnect::CallOutcome) {});
  }
}

void NlmForwarding::serve(std::shared_ptr<nlm::NlmService> service,
                          std::shared_ptr<nlm::LockState> state) {
  service_ = std::move(service);
  state_ = std::move(state);
}

void NlmForwarding::handle_call(interconnect::IncomingRequest request) {
  auto shared = std::make_shared<interconnect::IncomingRequest>(std::move(request));
  if (!service_ || !pool_.submit([this, shared] { run_call(*shared); })) {
    // Full or stopping, nothing run: an empty SystemErr reply, which the forwarder answers
    // NLM4_DENIED_GRACE_PERIOD (the client retries).
    std::vector<uint8_t> out;
    interconnect::encode_nlm_reply({static_cast<uint32_t>(rpc::AcceptStat::SystemErr), {}}, &out);
    shared->responder.reply(out);
  }
}

void NlmForwarding::run_call(const interconnect::IncomingRequest& request) {
  interconnect::LinkSession::Call running = request.begin();
  if (!running) return;  // fenced: the forwarder gave up on this call, which must never run
  request.responder.reply(answer(request.payload, request.peer_node));
}

std::vector<uint8_t> NlmForwarding::answer(std::span<const uint8_t> payload,
                                           const std::string& from_node) {
  interconnect::NlmCallRequest call;
  interconnect::NlmCallReply reply;
  rpc::CallContext context;
  context.prog = nlm::kNlmProgram;
  context.vers = nlm::kNlmVersion;
  util::SocketAddress client;
  std::string not_numeric;
  if (!service_ || !interconnect::decode_nlm_call(payload, &call) ||
      !util::parse_socket_address(call.client_host, call.client_port, &client, &not_numeric)) {
    reply.accept = static_cast<uint32_t>(rpc::AcceptStat::GarbageArgs);
  } else {
    context.peer = client.storage;
    context.peer_len = client.length;
    context.proc = call.proc;
    context.callback_relay = from_node;
    context.callback_from = call.server_host;
    rpc::DispatchResult r = service_->dispatch(context, call.args, &reply.results);
    reply.accept = static_cast<uint32_t>(r.accept);
    if (reply.results.size() > interconnect::kMaxNlmBody) {
      reply.results.clear();
      reply.accept = static_cast<uint32_t>(rpc::AcceptStat::SystemErr);
    }
  }
  std::vector<uint8_t> out;
  interconnect::encode_nlm_reply(reply, &out);
  return out;
}

void NlmForwarding::take_reboot_notice(std::span<const uint8_t> payload) {
  interconnect::NlmRebootNotice notice;
  if (state_ && interconnect::decode_reboot_notice(payload, &notice))
    state_->host_rebooted(notice.host, notice.from);
}

void NlmForwarding::handle_reboot(interconnect::IncomingRequest request) {
  take_reboot_notice(request.payload);
  request.responder.reply({});
}

nlm::CallbackAnswer NlmForwarding::relay(const nlm::CallbackCall& call,
                                         std::chrono::milliseconds timeout) {
  if (call.route.relay == local_node_) return nlm::CallbackSender::call_direct(call, timeout);
  std::shared_ptr<interconnect::CallChannel> channel = links_.channel(call.route.relay);
  if (!channel) return std::nullopt;  // the node is down: retried, and given up in the end
  interconnect::NlmCallbackRequest request;
  request.host = call.route.host;
  request.from = call.route.from;
  request.prog = call.prog;
  request.vers = call.vers;
  request.proc = call.proc;
  request.wants_status = call.wants_status;
  request.timeout_ms = static_cast<uint32_t>(
      std::min<int64_t>(timeout.count(), interconnect::kMaxCallbackTimeoutMs));
  request.args = call.args;
  std::vector<uint8_t> payload;
  if (!interconnect::encode_nlm_callback(request, &payload)) return std::nullopt;
  // The relay's own attempt may take the whole timeout (the portmapper lookup and the call),
  // and the link its round trip on top.
  interconnect::CallOutcome outcome = channel->call(interconnect::MessageType::NlmCallback,
                                                    std::move(payload), timeout + timeout_);
  interconnect::NlmCallbackReply reply;
  if (!outcome.ok() || !interconnect::decode_nlm_callback_reply(outcome.payload, &reply) ||
      !reply.answered)
    return std::nullopt;
  return reply.status;
}

std::vector<uint8_t> NlmForwarding::make_callback(std::span<const uint8_t> payload) {
  interconnect::NlmCallbackRequest request;
  interconnect::NlmCallbackReply reply;
  // Only calls to a client's lock manager: the cluster key lets a peer ask for nothing else.
  if (interconnect::decode_nlm_callback(payload, &request) && request.prog == nlm::kNlmProgram &&
      request.vers == nlm::kNlmVersion) {
    nlm::CallbackCall call = nlm::callback_to({request.host, request.from, ""}, request.prog,
                                              request.vers, request.proc);
    call.wants_status = request.wants_status;
    call.args = std::move(request.args);
    nlm::CallbackAnswer answer =
        nlm::CallbackSender::call_direct(call, std::chrono::milliseconds(request.timeout_ms));
    reply.answered = answer.has_value();
    reply.status = answer.value_or(0);
  }
  std::vector<uint8_t> out;
  interconnect::encode_nlm_callback_reply(reply, &out);
  return out;
}

void NlmForwarding::handle_callback(interconnect::IncomingRequest request) {
  auto shared = std::make_shared<interconnect::IncomingRequest>(std::move(request));
  if (!pool_.submit([this, shared] { shared->responder.reply(make_callback(shared->payload)); })) {
    std::vector<uint8_t> out;
    interconnect::encode_nlm_callback_reply({}, &out);  // not made: the owner retries
    shared->responder.reply(out);
  }
}

}  // namespace nasd::cluster
