// A thread's spare replies. An event loop answers most calls itself (run-to-completion) and
// sends the reply itself; once sent, a reply nobody else holds (the duplicate request cache
// keeps some) comes back here, and the next call answered on that loop encodes into it:
// neither the shared reply nor its body buffer is allocated again.
//
// A thread whose list is full gives further spares to a list shared by all threads, which a
// thread whose own list is empty takes from: an executor thread encodes the replies of calls
// that left the loop, and the loop sends them and gets them back.
//
// Invariants: a spare holds no tail (a READ's pinned cache blocks are released when it comes
// back, not when it is reused), its body is empty, and only one thread (or the shared list)
// holds it. At most kMaxSpareReplies are kept per thread and kMaxSharedSpareReplies shared,
// none with a body buffer above kMaxSpareReplyBody.
#pragma once

#include <memory>

#include "server/rpc/call_header.h"

namespace nasd::rpc {

inline constexpr size_t kMaxSpareReplies = 16;
inline constexpr size_t kMaxSharedSpareReplies = 256;
inline constexpr size_t kMaxSpareReplyBody = 64 * 1024;

// A reply to fill (marked `pooled`): a spare of this thread's, or a new one. Its body is empty
// but may keep the capacity of its last use: encode into it (see CallDispatcher::finish).
std::shared_ptr<EncodedReply> spare_reply();
// Gives `reply` back to this thread's spares when it is `pooled` and nothing else holds it
// (otherwise only drops this reference). Call it on the thread that will reuse it, once the reply is sent.
void recycle_reply(std::shared_ptr<const EncodedReply>&& reply);

}  // namespace nasd::rpc
