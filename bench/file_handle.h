// An NFSv3 file handle as opaque bytes the client owns, and the view of it libnfs wants.
#pragma once

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

#include <string>

namespace nasd::bench {

struct FileHandle {
  std::string bytes;

  static FileHandle from(const nfs_fh3& fh) { return FileHandle{std::string(fh.data.data_val, fh.data.data_len)}; }
  // libnfs only reads the handle while encoding a call, so a non-owning view is enough.
  nfs_fh3 view() const {
    nfs_fh3 fh{};
    fh.data.data_len = static_cast<u_int>(bytes.size());
    fh.data.data_val = const_cast<char*>(bytes.data());
    return fh;
  }
};

}  // namespace nasd::bench
