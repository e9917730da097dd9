// One NFSv3 call at a time on a bench::NfsSession, for the drill's verifying clients: issue,
// wait for the reply, and tell "no answer" (connection refused, reset, timed out: the session
// is then unusable) apart from an answer with an nfsstat3.
#pragma once

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

#include <functional>
#include <optional>
#include <string>

#include "bench/nfs_session.h"

namespace nasd::drill {

using Issue = std::function<int(rpc_context* rpc, rpc_cb cb, void* private_data)>;
// Sees the whole result (e.g. WRITE3res) when the status is NFS3_OK.
using OnOk = std::function<void(void* result)>;

// The status of the reply, or nullopt (and *error) when none came within the session's
// timeout. Every NFSv3 result starts with its nfsstat3, which is what is read.
std::optional<nfsstat3> call_once(bench::NfsSession& session, const Issue& issue, const OnOk& on_ok,
                                  std::string* error);

// A READDIR of `dir` to the end: the names in it, "." and ".." left out; nullopt on failure
// (*error says which status or that no answer came).
std::optional<std::vector<std::string>> list_dir(bench::NfsSession& session, const bench::FileHandle& dir,
                                                 std::string* error);

std::string nfsstat_name(nfsstat3 status);

}  // namespace nasd::drill
