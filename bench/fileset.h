// The fileset one worker owns on one target, as the handles the load needs: every procedure in
// the mix can be sent straight at a known object, with no path walk in front of it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/file_handle.h"

namespace nasd::bench {

struct FilesetDir {
  std::string name;                    // in Fileset::top
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
  std::string workdir;     // shared by all workers, in export_root
  FileHandle workdir_fh;
  std::string owner;       // this worker's directory in workdir: p<worker>t<target>
  FileHandle top;
  std::vector<FilesetDir> dirs;
  std::vector<FilesetFile> files;
  std::vector<FileHandle> symlinks;
  uint64_t bytes = 0;
  // A directory of `listing_entries` empty files (l0, l1, ...) that READDIRPLUS lists whole;
  // none when 0. Nothing else of the load touches it.
  FileHandle listing_dir;
  size_t listing_entries = 0;
};

}  // namespace nasd::bench
