#include "cluster/interconnect/volume_server.h"

#include <exception>
#include <memory>
#include <optional>

#include "fs/call/codec.h"
#include "fs/call/dispatch.h"

namespace nasd::interconnect {

// A forwarded call is decoded and run with the project's one codec and dispatch (fs/call/).
// The decoded request carries the caller's credential only, and this server holds no
// fs::JournalPass: nothing a peer sends can tag a journal sequence or force an inode.
using namespace fs::call;
namespace {

// The op of a request whose body may be malformed: the reply must name it so that the
// caller's decoder accepts the refusal. Byte 1 is the op in every codec version so far.
VolumeOp op_of(const std::vector<uint8_t>& payload) {
  return payload.size() >= 2 ? static_cast<VolumeOp>(payload[1]) : VolumeOp::Getattr;
}

// The ops with an attempt that change the volume: tried inline, they may park on their commit
// and must never be run a second time by the pool.
bool writes(VolumeOp op) { return op == VolumeOp::Write || op == VolumeOp::Commit; }

}  // namespace

VolumeServer::VolumeServer(fs::VolumeResolver* volumes, VolumeServerOptions options)
    : volumes_(volumes), answer_within_(options.answer_within), pool_({.threads = options.threads,
             .max_queued = options.max_queued,
             .at_stop = util::TaskQueue::AtStop::RunQueued,
             .room = "cluster"}) {}

void VolumeServer::attach(InterconnectServer& server) {
  server.set_handler(MessageType::VolumeCall,
                     [this](IncomingRequest request) { handle(std::move(request)); });
}

void VolumeServer::handle(IncomingRequest request) {
  if (try_inline(request)) return;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (answer_within_.count() > 0) deadline = std::chrono::steady_clock::now() + answer_within_;
  auto shared = std::make_shared<IncomingRequest>(std::move(request));
  if (!pool_.submit([this, shared, deadline] { execute(*shared, deadline); })) {
    shared->responder.reply(
        encode_reply(refused_volume_call(op_of(shared->payload), fs::Status::Jukebox)));
  }
}

bool VolumeServer::try_inline(IncomingRequest& request) {
  // Only the ops with a non-blocking attempt; the op is byte 1 of every request (op_of).
  const VolumeOp op = op_of(request.payload);
  if (!has_attempt(op)) return false;
  VolumeRequest req;
  if (!decode_request(request.payload, &req)) return false;  // the pool answers ServerFault
  // A stable WRITE or a COMMIT waits for its NVRAM commit by parking instead of holding this
  // thread or a worker: the reply then leaves from whichever thread brings the commit in.
  std::shared_ptr<util::ResumableCall> resumable;
  if (writes(op)) resumable = std::make_shared<util::ResumableCall>();
  std::optional<VolumeReply> reply;
  {
    std::optional<util::ResumableCall::Run> run;
    if (resumable) run.emplace(resumable, /*may_park=*/true);
    reply = attempt(req);
  }
  if (resumable && resumable->parked()) {
    // Applied and journalled: the answer is the commit's, whatever happens to the link now.
    // `req` points into the payload, whose buffer the moves keep where it is.
    auto parked = std::make_shared<ParkedCall>(
        ParkedCall{resumable, std::move(request), std::move(req)});
    parked_calls_.fetch_add(1, std::memory_order_relaxed);
    resumable->end_run([this, parked] { resume(*parked); });
    return true;
  }
  if (resumable) resumable->end_run(nullptr);
  if (!reply) return false;
  inline_calls_.fetch_add(1, std::memory_order_relaxed);
  request.responder.reply(encode_reply(*reply));
  return true;
}

std::optional<VolumeReply> VolumeServer::attempt(const VolumeRequest& req) {
  try {
    fs::Volume* volume = volumes_->find(req.volume_id);
    if (volume == nullptr) return std::nullopt;
    return try_execute_volume_call(*volume, req);
  } catch (const std::exception&) {
    // A read is run again by the pool, which contains what it throws. A WRITE may have been
    // applied before the throw: refused here rather than applied twice.
    if (writes(req.op())) return refused_volume_call(req.op(), fs::Status::ServerFault);
    return std::nullopt;
  }
}

void VolumeServer::resume(ParkedCall& call) {
  // The commit is in: this run finds the stored answer and changes nothing. It may not park
  // again; a volume that went away meanwhile is refused JUKEBOX, and the client's retry of
  // the WRITE (or COMMIT) finds it wherever it is by then.
  std::optional<VolumeReply> reply;
  {
    util::ResumableCall::Run run(call.resumable, /*may_park=*/false);
    reply = attempt(call.req);
  }
  call.resumable->end_run(nullptr);
  if (!reply) reply = refused_volume_call(call.req.op(), fs::Status::Jukebox);
  call.request.responder.reply(encode_reply(*reply));
}

void VolumeServer::execute(const IncomingRequest& request,
                           std::optional<std::chrono::steady_clock::time_point> deadline) {
  // Its connection was fenced while the request waited here: the forwarder has answered the
  // client JUKEBOX and the client may have moved on, so running it now could undo what the
  // client did since (link_session.h). Dropped unanswered: nobody waits for the answer.
  LinkSession::Call running = request.begin();
  if (!running) return;
  VolumeRequest req;
  VolumeReply reply;
  if (!decode_request(request.payload, &req)) {
    reply = refused_volume_call(op_of(request.payload), fs::Status::ServerFault);
  } else if (fs::Volume* volume = volumes_->find(req.volume_id)) {
    // The forwarding node's client call travels in the request (fs/call_identity.h), for this
    // node's journal; its deadline joins it, for the waits the volume may bound
    // (fs/call_deadline.h).
    req.deadline = deadline;
    reply = execute_volume_call(*volume, req);
  } else {
    reply = refused_volume_call(req.op(), fs::Status::Stale);
  }
  request.responder.reply(encode_reply(reply));
}

}  // namespace nasd::interconnect
