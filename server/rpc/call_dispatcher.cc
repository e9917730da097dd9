#include "server/rpc/call_dispatcher.h"

#include <cstring>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>

#include <boost/pool/pool_alloc.hpp>

#include "server/rpc/reply_pool.h"
#include "util/resumable_call.h"

namespace nasd::rpc {
namespace {

// The ResumableCall of the last call this thread ran inline and answered without parking: the
// next call here reuses it instead of allocating one (an event loop answers most calls so).
thread_local std::shared_ptr<util::ResumableCall> t_spare_resumable;

std::shared_ptr<util::ResumableCall> new_resumable() {
  if (t_spare_resumable && t_spare_resumable.use_count() == 1) {
    std::shared_ptr<util::ResumableCall> call = std::move(t_spare_resumable);
    call->recycle();
    return call;
  }
  return std::allocate_shared<util::ResumableCall>(
      boost::fast_pool_allocator<util::ResumableCall>());
}

}  // namespace

// One call between its arrival and its reply, across every run of its procedure.
struct CallDispatcher::Call {
  Service* service = nullptr;
  CallContext call;
  Record record;
  size_t args_offset = 0;
  std::optional<DrcKey> drc_key;
  Clock::time_point received;
  ReplyCallback on_reply;
  std::shared_ptr<util::ResumableCall> resumable;  // null: the service waits in place
};

CallDispatcher::CallDispatcher(util::TaskQueue* executor, DuplicateRequestCache* drc,
                               CallStats* stats, bool run_inline)
    : executor_(executor), drc_(drc), stats_(stats), run_inline_(run_inline) {}

void CallDispatcher::add_service(std::shared_ptr<Service> service) {
  if (find(service->program()) != nullptr)
    throw std::invalid_argument("program " + std::to_string(service->program()) +
                                " registered twice");
  std::vector<std::string> names;
  for (uint32_t p = 0; p < service->num_procs(); ++p)
    names.emplace_back(service->proc_name(p));
  std::string prog_name(service->program_name());
  if (prog_name.empty()) prog_name = std::to_string(service->program());
  for (uint32_t v = service->low_version(); v <= service->high_version(); ++v)
    stats_->add_program(service->program(), v, prog_name, names);
  services_.push_back(std::move(service));
}

Service* CallDispatcher::find(uint32_t prog) const {
  for (const auto& s : services_)
    if (s->program() == prog) return s.get();
  return nullptr;
}

std::optional<size_t> CallDispatcher::locate_payload(std::span<const uint8_t> head) const {
  const DecodedCall decoded = decode_call_header(head);
  if (decoded.status != CallHeaderStatus::Ok) return std::nullopt;
  const Service* service = find(decoded.call.prog);
  if (service == nullptr || decoded.call.vers < service->low_version() ||
      decoded.call.vers > service->high_version() || decoded.call.proc >= service->num_procs())
    return std::nullopt;
  const std::optional<size_t> in_args =
      service->bulk_payload_offset(decoded.call, head.subspan(decoded.args_offset));
  if (!in_args) return std::nullopt;
  return decoded.args_offset + *in_args;
}

CallDispatcher::Outcome CallDispatcher::reject(TransportCounter counter, EncodedReply reply) {
  stats_->count(counter);
  return {Outcome::SendNow, std::make_shared<const EncodedReply>(std::move(reply))};
}

CallDispatcher::Outcome CallDispatcher::handle(Record record,
                                               const CallOrigin& origin,
                                               Clock::time_point received,
                                               const ReplyCallbackMaker& make_on_reply) {
  DecodedCall decoded = decode_call_header(record);
  CallContext& call = decoded.call;
  switch (decoded.status) {
    case CallHeaderStatus::Malformed:
      stats_->count(TransportCounter::BadRecords);
      return {Outcome::Close, nullptr};
    case CallHeaderStatus::RpcVersionMismatch:
      return reject(TransportCounter::RpcMismatch, encode_rpc_mismatch_reply(call.xid));
    case CallHeaderStatus::AuthError:
      return reject(TransportCounter::AuthErrors,
                    encode_auth_error_reply(call.xid, decoded.auth_stat));
    case CallHeaderStatus::Ok:
      break;
  }

  // Services are only added before the transport starts, so this lookup needs no lock.
  Service* service = find(call.prog);
  if (service == nullptr)
    return reject(TransportCounter::ProgUnavail,
                  encode_accepted_reply(call.xid, AcceptStat::ProgUnavail, {}));
  if (call.vers < service->low_version() || call.vers > service->high_version())
    return reject(TransportCounter::ProgMismatch,
                  encode_accepted_reply(call.xid, AcceptStat::ProgMismatch, {},
                                        service->low_version(), service->high_version()));
  if (call.proc >= service->num_procs())
    return reject(TransportCounter::ProcUnavail,
                  encode_accepted_reply(call.xid, AcceptStat::ProcUnavail, {}));

  std::memcpy(&call.peer, &origin.peer, sizeof call.peer);
  call.peer_len = origin.peer_len;
  call.tcp = origin.tcp;
  call.local_port = origin.local_port;
  std::memcpy(&call.local, &origin.local, sizeof call.local);
  call.local_len = origin.local_len;

  std::optional<DrcKey> drc_key;
  std::span<const uint8_t> call_args(record.data() + decoded.args_offset,
                                     record.size() - decoded.args_offset);
  if (drc_ != nullptr && service->cacheable(call.proc) && service->may_cache(call, call_args)) {
    drc_key = DrcKey::make(call, call_args);
    DuplicateRequestCache::Lookup seen = drc_->begin(*drc_key);
    if (seen.state == DuplicateRequestCache::State::Done) {
      stats_->count(TransportCounter::DrcHits);
      return {Outcome::SendNow, seen.reply};
    }
    if (seen.state == DuplicateRequestCache::State::InProgress ||
        seen.state == DuplicateRequestCache::State::Full) {
      stats_->count(TransportCounter::DrcInProgressDrops);
      return {Outcome::Drop, nullptr};
    }
  }

  std::shared_ptr<util::ResumableCall> resumable;
  if (service->resumable()) resumable = new_resumable();
  auto make_pending = [&] {
    // Calls that leave the loop come from a pool (Boost.Pool), as do their resumable states.
    auto pending = std::allocate_shared<Call>(boost::fast_pool_allocator<Call>());
    pending->service = service;
    pending->call = std::move(call);
    pending->args_offset = decoded.args_offset;
    pending->record = std::move(record);  // the heap buffer moves: call_args stays valid
    pending->drc_key = drc_key;
    pending->received = received;
    pending->on_reply = make_on_reply();
    pending->resumable = resumable;
    return pending;
  };

  if (run_inline_) {
    ReplySlot slot = take_slot();
    std::optional<DispatchResult> result;
    {
      // A resumable call may park here: a forwarded call (GETATTR, READ, READDIR, CREATE...) is
      // sent from this thread without waiting (RemoteVolume's attempt) and resumed where its
      // answer arrives, so it never visits the executor.
      std::optional<util::ResumableCall::Run> resumable_run;
      if (resumable) resumable_run.emplace(resumable, /*may_park=*/true);
      util::LentPageRun lent(record.pages());  // a volume may keep the payload's pages
      try {
        result = service->dispatch_inline(call, call_args, &slot.results);
      } catch (const std::exception&) {
        // As on the executor: a procedure that throws fails the call, never the server.
        result = DispatchResult{};
        result->accept = AcceptStat::SystemErr;
        slot.results.clear();
      }
    }
    if (resumable && resumable->parked()) {
      give_back(std::move(slot));
      if (park(make_pending())) return {Outcome::Pending, nullptr};
      // Unreachable: a run that parked always parks (end_run). Kept total for safety.
      return {Outcome::Drop, nullptr};
    }
    if (resumable) resumable->end_run(nullptr);
    // A volume that would have to wait answers "would block" and the call goes to the executor.
    if (result) {
      if (resumable) t_spare_resumable = std::move(resumable);  // answered: nobody needs it
      Reply reply =
          finish(call, call_args, drc_key, received, std::move(*result), std::move(slot));
      recycle_record(std::move(record));  // call_args is not used after this
      return {Outcome::SendNow, std::move(reply)};
    }
    give_back(std::move(slot));
  }

  auto pending = make_pending();
  if (!executor_->submit([this, pending] { run(pending, true); })) {
    if (drc_key) drc_->abandon(*drc_key);
    return {Outcome::Drop, nullptr};
  }
  return {Outcome::Pending, nullptr};
}

void CallDispatcher::run(const std::shared_ptr<Call>& c, bool may_park) {
  std::span<const uint8_t> args(c->record.data() + c->args_offset,
                                c->record.size() - c->args_offset);
  ReplySlot slot = take_slot();
  DispatchResult result;
  {
    std::optional<util::ResumableCall::Run> resumable_run;
    if (c->resumable) resumable_run.emplace(c->resumable, may_park);
    util::LentPageRun lent(c->record.pages());
    try {
      result = c->service->dispatch(c->call, args, &slot.results);
    } catch (const std::exception&) {
      // A procedure that throws must not take the server down; the client sees SYSTEM_ERR.
      result = DispatchResult{};
      result.accept = AcceptStat::SystemErr;
    }
  }
  // A run that waited for an answer from elsewhere: its result is not the call's.
  if (c->resumable && park(c)) return give_back(std::move(slot));
  c->on_reply(finish(c->call, args, c->drc_key, c->received, std::move(result), std::move(slot)));
}

bool CallDispatcher::park(const std::shared_ptr<Call>& c) {
  // Counted before end_run: the answer may already be in, and resume() counts it down.
  lifeline_->parked.fetch_add(1);
  auto unregister = [](Lifeline& lifeline, const Call* call) {
    std::lock_guard keys(lifeline.keys_mu);
    lifeline.parked_keys.erase(call);
  };
  if (c->drc_key) {
    std::lock_guard keys(lifeline_->keys_mu);
    if (lifeline_->keys_closed) {
      if (drc_) drc_->abandon(*c->drc_key);  // nobody will complete it: see close()
    } else {
      lifeline_->parked_keys[c.get()] = *c->drc_key;
    }
  }
  if (c->resumable->end_run([this, lifeline = lifeline_, c, unregister] {
        std::shared_lock lock(lifeline->mu);
        lifeline->parked.fetch_sub(1);
        unregister(*lifeline, c.get());
        if (!lifeline->open) return;  // the transport is going: close() forgot its entry
        resume(c);
      })) {
    lifeline_->parks.fetch_add(1);
    return true;
  }
  unregister(*lifeline_, c.get());
  lifeline_->parked.fetch_sub(1);
  return false;
}

CallDispatcher::Reply CallDispatcher::finish(const CallContext& call,
                                             std::span<const uint8_t> args,
                                             const std::optional<DrcKey>& drc_key,
                                             Clock::time_point received, DispatchResult result,
                                             ReplySlot&& slot) {
  const uint64_t reply_bytes = slot.results.size() + result.tail.size();
  const bool ok = result.kind == DispatchResult::Accepted && result.accept == AcceptStat::Success;
  *slot.reply = encode_dispatch_reply(call.xid, std::move(result), std::move(slot.results));
  slot.reply->pooled = true;  // made by spare_reply(): not a const object
  Reply reply = std::move(slot.reply);
  if (drc_key) drc_->complete(*drc_key, reply);
  stats_->record_call(call.prog, call.vers, call.proc, !ok,
                      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() -
                                                                            received),
                      args.size(), reply_bytes);
  return reply;
}

CallDispatcher::ReplySlot CallDispatcher::take_slot() {
  ReplySlot slot{spare_reply(), {}};
  slot.results = std::move(slot.reply->body);  // a spare's body is empty (reply_pool.h)
  return slot;
}

void CallDispatcher::give_back(ReplySlot&& slot) {
  slot.reply->body = std::move(slot.results);  // recycle_reply empties it
  recycle_reply(std::move(slot.reply));
}

// Called with the lifeline held open, on whichever thread brought the answer (the
// interconnect's reader) or ended the run.
void CallDispatcher::resume(const std::shared_ptr<Call>& c) {
  if (run_inline_ && resume_inline(c)) return;
  if (executor_->submit([this, c] { run(c, true); })) return;
  // The executor is full or stopping: finish the call here. Its answer is in, so this run
  // only encodes the reply; a further wait would fail at once instead of blocking this thread.
  run(c, false);
}

bool CallDispatcher::resume_inline(const std::shared_ptr<Call>& c) {
  std::span<const uint8_t> args(c->record.data() + c->args_offset,
                                c->record.size() - c->args_offset);
  ReplySlot slot = take_slot();
  std::optional<DispatchResult> result;
  {
    // may_park false: this thread brings answers in and must not send; a wait whose answer is
    // not in yet makes the attempt "would block" and the call goes to the executor.
    util::ResumableCall::Run resumable_run(c->resumable, /*may_park=*/false);
    util::LentPageRun lent(c->record.pages());
    try {
      result = c->service->dispatch_inline(c->call, args, &slot.results);
    } catch (const std::exception&) {
      result = DispatchResult{};
      result->accept = AcceptStat::SystemErr;
      slot.results.clear();
    }
  }
  c->resumable->end_run(nullptr);  // a run that may not park never parked
  if (!result) {
    give_back(std::move(slot));
    return false;
  }
  lifeline_->inline_resumes.fetch_add(1, std::memory_order_relaxed);
  c->on_reply(finish(c->call, args, c->drc_key, c->received, std::move(*result), std::move(slot)));
  return true;
}

void CallDispatcher::close() {
  std::unique_lock lock(lifeline_->mu);
  if (!lifeline_->open) return;
  lifeline_->open = false;
  decltype(lifeline_->parked_keys) forgotten;
  {
    std::lock_guard keys(lifeline_->keys_mu);
    lifeline_->keys_closed = true;
    forgotten.swap(lifeline_->parked_keys);
  }
  // Parked calls are answered by nobody from now on (their answers are dropped): their cache
  // entries must not stay "in progress", or the client's retransmissions to the server that
  // serves this address next (the node's cache is shared) are dropped until it gives up.
  if (drc_)
    for (const auto& [call, key] : forgotten) drc_->abandon(key);
}

CallDispatcher::~CallDispatcher() { close(); }

size_t CallDispatcher::parked() const { return lifeline_->parked.load(); }

uint64_t CallDispatcher::parks() const { return lifeline_->parks.load(); }

uint64_t CallDispatcher::inline_resumes() const { return lifeline_->inline_resumes.load(); }

}  // namespace nasd::rpc
