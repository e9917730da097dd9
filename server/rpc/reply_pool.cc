#include "server/rpc/reply_pool.h"

#include <vector>

namespace nasd::rpc {
namespace {
thread_local std::vector<std::shared_ptr<EncodedReply>> t_spares;
}  // namespace

std::shared_ptr<EncodedReply> spare_reply() {
  if (t_spares.empty()) {
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
  if (!reply || !reply->pooled || reply.use_count() != 1 || t_spares.size() >= kMaxSpareReplies ||
      reply->body.capacity() > kMaxSpareReplyBody) {
    reply.reset();
    return;
  }
  if (t_spares.capacity() < kMaxSpareReplies) t_spares.reserve(kMaxSpareReplies);
  // Made by spare_reply() as a mutable EncodedReply (pooled); shared as const only in use.
  auto mutable_reply = std::const_pointer_cast<EncodedReply>(std::move(reply));
  mutable_reply->tail = {};  // releases pinned cache blocks now
  mutable_reply->body.clear();
  mutable_reply->head_len = 0;
  t_spares.push_back(std::move(mutable_reply));
}

}  // namespace nasd::rpc
