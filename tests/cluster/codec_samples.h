// TEST FIXTURE ONLY: one request with distinctive (non-default) values for every Volume call,
// shared by the codec and fuzz tests. Strings live in static storage because the request
// structs borrow them.
#pragma once

#include <vector>

#include "fs/call/calls.h"

namespace nasd::cluster::testing {

inline fs::SetAttr sample_setattr() {
  fs::SetAttr sa;
  sa.mode = 0755;
  sa.uid = 1001;
  sa.size = 1ull << 33;
  sa.atime_how = fs::TimeHow::ClientTime;
  sa.atime = {1700000000, 5};
  sa.mtime_how = fs::TimeHow::ServerTime;
  return sa;
}

inline fs::OpContext sample_context() {
  fs::OpContext ctx;
  ctx.cred = {1000, 100, {4, 24, 27}};
  return ctx;
}

inline std::vector<fs::call::VolumeRequest> sample_requests() {
  using namespace fs::call;
  static const uint8_t kData[] = {0, 1, 2, 0xff, 0x80, 42};
  fs::InodeId a{77, 3}, b{88, 4};
  std::vector<CallArgs> all = {
      GetattrArgs{a},
      SetattrArgs{a, sample_setattr(), fs::Time{12, 34}},
      LookupArgs{a, "name.txt"},
      AccessArgs{a, fs::kAccessRead | fs::kAccessModify},
      ReadlinkArgs{b},
      ReadArgs{a, 1ull << 40, 65536},
      WriteArgs{a, 4096, kData, fs::Stability::DataSync},
      CreateArgs{a, "new", fs::CreateMode::Exclusive, sample_setattr(), 0xfeedfacecafebeefull},
      MkdirArgs{a, "dir", sample_setattr()},
      SymlinkArgs{a, "link", "../some/where", sample_setattr()},
      MknodArgs{a, "dev", fs::FileType::Chr, sample_setattr(), 8, 1},
      RemoveArgs{a, "gone"},
      RmdirArgs{b, "gone-dir"},
      RenameArgs{a, "from", b, "to"},
      LinkArgs{a, b, "hard"},
      ReaddirArgs{a, 99, 0xabcdef, 50, true},
      FsstatArgs{b},
      CommitArgs{a, 512, 1024},
      DescribeArgs{},
  };
  std::vector<VolumeRequest> out;
  uint32_t vol = 5;
  for (auto& args : all) out.push_back(VolumeRequest{vol++, sample_context(), args, std::nullopt});
  return out;
}

}  // namespace nasd::cluster::testing
