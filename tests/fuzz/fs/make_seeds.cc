// Writes the seeds of fs_call_codec_fuzzer and nvram_journal_record_fuzzer: one encoded request
// and one reply per mutating call, and the same calls as complete journal records at position 0.
//   make_call_fuzz_seeds tests/fuzz/fs/seeds tests/fuzz/nvram/seeds
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "fs/call/codec.h"
#include "nvram/call_record.h"
#include "nvram/record.h"
#include "nvram/reply_window.h"

using namespace nasd;
using namespace nasd::fs::call;

namespace {

void save(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

VolumeReply reply_for(VolumeOp op) {
  VolumeReply r;
  r.op = op;
  r.status = fs::Status::Ok;
  r.write_verifier = 0x1234;
  fs::Attr attr;
  attr.type = fs::FileType::Reg;
  attr.size = 5000;
  fs::Wcc wcc;
  wcc.before = fs::PreAttr{4096, {1, 2}, {3, 4}};
  wcc.after = attr;
  switch (op) {
    case VolumeOp::Write: r.result = WriteResult{fs::Stability::Unstable, wcc}; break;
    case VolumeOp::Create:
    case VolumeOp::Mkdir:
    case VolumeOp::Symlink:
    case VolumeOp::Mknod: r.result = CreatedResult{{12, 3}, attr, wcc}; break;
    case VolumeOp::Rename: r.result = RenameResult{wcc, wcc}; break;
    case VolumeOp::Link: r.result = LinkResult{attr, wcc}; break;
    default: r.result = WccResult{wcc}; break;
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <fs seeds dir> <nvram seeds dir>\n", argv[0]);
    return 2;
  }
  static const uint8_t kData[] = {1, 2, 3, 4, 5, 6, 7, 8};
  fs::SetAttr sa;
  sa.mode = 0644;
  sa.size = 5000;
  const fs::InodeId dir{1, 0}, file{12, 3};
  const std::vector<std::pair<std::string, CallArgs>> calls = {
      {"write", WriteArgs{file, 4096, kData, fs::Stability::Unstable}},
      {"setattr", SetattrArgs{file, sa, std::nullopt}},
      {"create", CreateArgs{dir, "f", fs::CreateMode::Exclusive, {}, 0xfeed}},
      {"mkdir", MkdirArgs{dir, "d", sa}},
      {"symlink", SymlinkArgs{dir, "s", "../f", {}}},
      {"mknod", MknodArgs{dir, "c", fs::FileType::Chr, {}, 8, 1}},
      {"remove", RemoveArgs{dir, "f"}},
      {"rmdir", RmdirArgs{dir, "d"}},
      {"rename", RenameArgs{dir, "a", dir, "b"}},
      {"link", LinkArgs{file, dir, "l"}},
  };
  std::vector<std::vector<uint8_t>> window;
  for (const auto& [name, args] : calls) {
    VolumeRequest req;
    req.volume_id = 1;
    req.ctx.cred = {1000, 100, {4, 24}};
    req.args = args;
    if (req.op() != VolumeOp::Write) {  // as the NFS program names its non-idempotent calls
      fs::CallIdentity id;
      id.address = {127, 0, 0, 1};
      id.family = 2;
      id.port = 801;
      id.xid = 0x1000 + static_cast<uint32_t>(req.op());
      id.prog = 100003;
      id.vers = 3;
      id.proc = 8;
      id.args_hash = 0x0123456789abcdefull;
      id.export_id = 0x00a1b2c3;
      req.identity = id;
    }
    VolumeReply reply = reply_for(req.op());
    save(std::string(argv[1]) + "/request-" + name, encode_request(req));
    save(std::string(argv[1]) + "/reply-" + name, encode_reply(reply));
    nvram::CallRecordPieces pieces;
    pieces.set_request(req);
    pieces.set_reply(reply);
    const std::span<const uint8_t> parts[] = {std::span<const uint8_t>(pieces.prefix.data()),
                                              pieces.data,
                                              std::span<const uint8_t>(pieces.suffix.data())};
    std::vector<uint8_t> record(nvram::record_footprint(pieces.size()));
    nvram::RecordKey key{0, 7, 1, 1, nvram::RecordType::Call};
    nvram::encode_record(record.data(), key, parts);
    save(std::string(argv[2]) + "/record-" + name, record);
    if (req.op() == VolumeOp::Write) continue;
    window.push_back(pieces.prefix.data());
    window.back().insert(window.back().end(), pieces.suffix.data().begin(),
                         pieces.suffix.data().end());
  }
  // A reply window file (nvram/reply_window.h) of the non-WRITE calls, for the same fuzzer.
  std::string error;
  if (!nvram::save_reply_window(std::string(argv[2]) + "/reply-window", window, &error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  return 0;
}
