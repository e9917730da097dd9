// Copies a file that is mostly holes (an NVRAM region image) without filling the holes in:
// only the extents that hold data are read and written.
#pragma once

#include <string>

namespace nasd {

// Replaces `to` with a copy of `from`, fsynced. False and *error on failure.
bool sparse_copy(const std::string& from, const std::string& to, std::string* error);

}  // namespace nasd
