// The 22 NFSv3 procedures (RFC 1813 section 3.3), one function each. Every one decodes its
// arguments, applies the export policy through Nfs3Call::open*, makes exactly one Volume call
// and encodes the reply, including the attributes / WCC data RFC 1813 puts in error replies.
#pragma once

#include "server/nfs/nfs3/nfs3_call.h"

namespace nasd::nfs::nfs3 {

using Procedure = rpc::DispatchResult (*)(Nfs3Call&);

// attr_procs.cc
rpc::DispatchResult proc_getattr(Nfs3Call& call);
rpc::DispatchResult proc_setattr(Nfs3Call& call);
// lookup_procs.cc
rpc::DispatchResult proc_lookup(Nfs3Call& call);
rpc::DispatchResult proc_access(Nfs3Call& call);
rpc::DispatchResult proc_readlink(Nfs3Call& call);
// io_procs.cc
rpc::DispatchResult proc_read(Nfs3Call& call);
rpc::DispatchResult proc_write(Nfs3Call& call);
rpc::DispatchResult proc_commit(Nfs3Call& call);
// create_procs.cc
rpc::DispatchResult proc_create(Nfs3Call& call);
rpc::DispatchResult proc_mkdir(Nfs3Call& call);
rpc::DispatchResult proc_symlink(Nfs3Call& call);
rpc::DispatchResult proc_mknod(Nfs3Call& call);
// unlink_procs.cc
rpc::DispatchResult proc_remove(Nfs3Call& call);
rpc::DispatchResult proc_rmdir(Nfs3Call& call);
rpc::DispatchResult proc_rename(Nfs3Call& call);
rpc::DispatchResult proc_link(Nfs3Call& call);
// readdir_procs.cc
rpc::DispatchResult proc_readdir(Nfs3Call& call);
rpc::DispatchResult proc_readdirplus(Nfs3Call& call);
// fsinfo_procs.cc
rpc::DispatchResult proc_fsstat(Nfs3Call& call);
rpc::DispatchResult proc_fsinfo(Nfs3Call& call);
rpc::DispatchResult proc_pathconf(Nfs3Call& call);

}  // namespace nasd::nfs::nfs3
