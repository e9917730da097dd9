// The interconnect's messages use the project's one byte reader/writer (util/byte_io.h); these
// names keep the framing, hello and heartbeat code unchanged.
#pragma once

#include "util/byte_io.h"

namespace nasd::interconnect {

using WireWriter = util::ByteWriter;
using WireReader = util::ByteReader;

}  // namespace nasd::interconnect
