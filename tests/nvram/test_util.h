// Helpers shared by the nvram tests: scratch directories and small journal setups.
#pragma once

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "nvram/journal.h"
#include "nvram/journal_options.h"
#include "fs/volume.h"
#include "tests/support/memory_fs.h"
#include "util/link_handshake.h"

namespace nasd::nvram::testing {

// A fresh directory under $TMPDIR (or /tmp), removed at the end of the test.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Options for a small journal in `dir` that never flushes on its own unless asked.
// The key of every mirror link in the tests (nasd-mirror gets it in a file, see MirrorProcess).
inline link::Credentials test_link_credentials(const std::string& self = "primary") {
  return {std::vector<uint8_t>(32, 0x5a), self};
}

JournalOptions small_options(const std::string& region_path, uint64_t size,
                             DurabilityMode mode = DurabilityMode::Process);
// A 256 KiB log whose write-behind runs every 20 ms from half full on (flush, carry, trim), and
// whose appends wait 3 s for room: for tests that push far more than the log through it.
JournalOptions churning_options(const std::string& region_path);

// The MemoryFs fixture set up as the journal's target: the tests act as several users (the
// default credential is nobody), so its root directory is open to all of them. With a path,
// the durable state persists in that file.
test_support::MemoryFsOptions mem_target_options(std::string persist_path = "");

// Bytes filled with a pattern derived from `seed`, so a test can tell every block apart.
std::vector<uint8_t> pattern(uint64_t seed, size_t n);

}  // namespace nasd::nvram::testing

namespace nasd::nvram::testing {

// Everything a client could observe about a volume's tree except timestamps, one line per
// object, for comparing a volume before a crash with the volume after replay.
std::string tree_snapshot(fs::Volume& volume);

}  // namespace nasd::nvram::testing
