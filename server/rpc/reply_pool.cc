#include "server/rpc/reply_pool.h"

#include <mutex>
#include <vector>

namespace nasd::rpc {
namespace {
thread_local std::vector<std::shared_ptr<EncodedReply>> t_spares;

// Spares that a thread's own list had no room for, for threads that encode more replies than
// they send: an executor thread encodes the reply of a call that left the loop, and the loop
// sends it and gets it back. Without this the executor allocated a reply and its body per call.
struct SharedSpares {
  std::mutex mu;
  std::vector<std::shared_ptr<EncodedReply>> replies;
};
SharedSpares& shared_spares() {
  static SharedSpares* spares = new SharedSpares;  // never destroyed: threads may outlive exit
  return *spares;
}

std::shared_ptr<EncodedReply> take_shared_spare() {
  SharedSpares& shared = shared_spares();
  std::lock_guard lock(shared.mu);
  if (shared.replies.empty()) return nullptr;
  std::shared_ptr<EncodedReply> reply = std::move(shared.replies.back());
  shared.replies.pop_back();
  return reply;
}

// When the shared list is full too, `reply` is freed.
void give_shared_spare(std::shared_ptr<EncodedReply> reply) {
  SharedSpares& shared = shared_spares();
  std::lock_guard lock(shared.mu);
  if (shared.replies.size() >= kMaxSharedSpareReplies) return;
  if (shared.replies.capacity() < kMaxSharedSpareReplies) shared.replies.reserve(kMaxSharedSpareReplies);
  shared.replies.push_back(std::move(reply));
}
}  // namespace

std::shared_ptr<EncodedReply> spare_reply() {
  if (t_spares.empty()) {
    if (std::shared_ptr<EncodedReply> shared = take_shared_spare()) return shared;
    auto reply = std::make_shared<EncodedReply>();
    reply->pooled = true;
    return reply;
  }
  std::shared_ptr<EncodedReply> reply = std::move(t_spares.back());
  t_spares.pop_back();
  return reply;
}

void recycle_reply(std::shared_ptr<const EncodedReply>&& reply) {
  // use_count 1: no other owner, and none can appear (replies are never held weakly).
  if (!reply || !reply->pooled || reply.use_count() != 1 ||
      reply->body.capacity() > kMaxSpareReplyBody) {
    reply.reset();
    return;
  }
  // Made by spare_reply() as a mutable EncodedReply (pooled); shared as const only in use.
  auto mutable_reply = std::const_pointer_cast<EncodedReply>(std::move(reply));
  mutable_reply->tail = {};  // releases pinned cache blocks now
  mutable_reply->body.clear();
  mutable_reply->head_len = 0;
  if (t_spares.size() < kMaxSpareReplies) {
    if (t_spares.capacity() < kMaxSpareReplies) t_spares.reserve(kMaxSpareReplies);
    t_spares.push_back(std::move(mutable_reply));
    return;
  }
  give_shared_spare(std::move(mutable_reply));
}

}  // namespace nasd::rpc
