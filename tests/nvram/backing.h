// The file systems the journal is tested over: the MemoryFs test fixture (persisted to a file)
// and, when it is built, the real log-structured fs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fs/journal_target.h"

namespace nasd::nvram::testing {

enum class Backing { Mem, Lfs };

const char* backing_name(Backing b);
std::vector<Backing> available_backings();
// Opens (creating on first use) the backing's durable state inside `dir`; a reopen after a
// crash recovers whatever that file system made durable. Throws std::runtime_error.
std::shared_ptr<fs::JournalTarget> open_backing(Backing b, const std::string& dir, uint32_t id);

}  // namespace nasd::nvram::testing
