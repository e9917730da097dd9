// Blocking helper for setup work (connect, mount, building the fileset): run N asynchronous
// libnfs calls on one rpc_context with at most `window` in flight, and return when all replied.
// The measured load never uses this; it is paced by the worker loop instead.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

struct rpc_context;

namespace nasd::bench {

// Queue call `i` with libnfs, passing it `cb` and `private_data` unchanged; return what the
// libnfs *_async function returned (0 when queued).
using BatchIssue = std::function<int(size_t i, void (*cb)(rpc_context*, int, void*, void*), void* private_data)>;
// Look at a successful RPC reply of call `i`; return "" or why the call failed (e.g. an nfsstat3).
using BatchReply = std::function<std::string(size_t i, void* data)>;

// libnfs's last error on `rpc`, or a placeholder: libnfs may have none to give (NULL).
std::string rpc_error_text(rpc_context* rpc);

// False with `*error` set on the first failure (later calls are not issued, the ones in flight
// are waited for) or when no reply came for `timeout_ms`.
bool run_batch(rpc_context* rpc, size_t count, size_t window, const BatchIssue& issue,
               const BatchReply& on_reply, int timeout_ms, std::string* error);

}  // namespace nasd::bench
