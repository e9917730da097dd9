// Creates a worker's fileset on one target through NFS (MKDIR, CREATE, WRITE, COMMIT, SYMLINK),
// laid out as <workdir>/<owner>/d<N>/{f<i>, s<i>, r<i>}: files with the planned sizes, symlinks
// to some of them, and spare empty files for REMOVE.
#pragma once

#include <string>

#include "bench/fileset.h"
#include "bench/fileset_plan.h"
#include "bench/nfs_session.h"

namespace nasd::bench {

// `workdir` is one path component under the export root, shared by all workers (created when
// missing); `owner` names this worker's directory on this target and must not exist yet (two
// targets may be the same export). False with `*error` on any failure.
bool build_fileset(NfsSession& session, const FilesetShape& shape, const std::string& workdir,
                   const std::string& owner, Fileset* out, std::string* error);

}  // namespace nasd::bench
