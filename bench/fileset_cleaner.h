// Removes what build_fileset made, and whatever CREATE added since: every name the fileset knows
// of, its directories and the worker's directory; then, once every worker is done, the shared
// workdir.
#pragma once

#include <string>

#include "bench/fileset.h"
#include "bench/nfs_session.h"

namespace nasd::bench {

// False with `*error` on the first failure other than "already gone".
bool remove_fileset(NfsSession& session, const Fileset& fileset, std::string* error);
// Call once, after every worker's remove_fileset: a workdir still holding something else (another
// run given the same --workdir) is left alone without complaint.
bool remove_workdir(NfsSession& session, const Fileset& fileset, std::string* error);

}  // namespace nasd::bench
