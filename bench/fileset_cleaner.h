// Removes what build_fileset made, and whatever CREATE added since: every name the fileset knows
// of, its directories, the worker's directory, and the shared workdir once it is empty.
#pragma once

#include <string>

#include "bench/fileset.h"
#include "bench/nfs_session.h"

namespace nasd::bench {

// False with `*error` on the first failure other than "already gone". The shared workdir is
// removed only by the last worker to get there (the others see it still in use, which is fine).
bool remove_fileset(NfsSession& session, const Fileset& fileset, std::string* error);

}  // namespace nasd::bench
