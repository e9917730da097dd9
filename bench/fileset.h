// The fileset one worker owns on one target, as the handles the load needs: every procedure in
// the mix can be sent straight at a known object, with no path walk in front of it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/file_handle.h"

namespace nasd::bench {

struct FilesetDir {
  FileHandle fh;
  std::vector<std::string> names;      // files and symlinks that exist here (LOOKUP picks one)
  std::vector<std::string> removable;  // empty files REMOVE may take; CREATE puts new ones here
};

struct FilesetFile {
  FileHandle fh;
  uint64_t size = 0;
};

struct Fileset {
  FileHandle export_root;  // FSSTAT / FSINFO go here
  FileHandle top;          // <workdir>/p<worker>
  std::vector<FilesetDir> dirs;
  std::vector<FilesetFile> files;
  std::vector<FileHandle> symlinks;
  uint64_t bytes = 0;
};

}  // namespace nasd::bench
