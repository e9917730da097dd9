// Writes the NLM/NSM fuzzer's seed inputs (fuzz_input.h) into a folder:
//   make_nlm_fuzz_seeds tests/fuzz/nlm/seeds
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "server/nlm/volume_handover.h"
#include "server/nlm/xdr/nlm4_prot.h"
#include "server/nlm/xdr/sm_prot.h"
#include "tests/fuzz/nlm/fuzz_input.h"

namespace {

using namespace nasd::nlm::fuzz;

template <typename T>
std::string encode(bool_t (*fn)(XDR*, T*), T value) {
  std::string buf(8192, '\0');
  XDR x;
  xdrmem_create(&x, buf.data(), static_cast<u_int>(buf.size()), XDR_ENCODE);
  if (!fn(&x, &value)) std::abort();
  buf.resize(xdr_getpos(&x));
  xdr_destroy(&x);
  return buf;
}

std::string g_fh = [] {
  std::string fh(32, '\0');
  fh[0] = static_cast<char>(kHandleMarker);
  fh[1] = 0;  // volume 7
  fh[2] = 3;  // inode 3
  return fh;
}();
std::string g_cookie = "ck";

nlm4_netobj obj(const std::string& s) { return {static_cast<u_int>(s.size()), const_cast<char*>(s.data())}; }

struct Owner {
  std::string name, oh;
};
Owner a{"client-a", "oh-a"}, b{"client-b", "oh-b"};

nlm4_lock alock(const Owner& o, uint64_t off, uint64_t len) {
  return {const_cast<char*>(o.name.c_str()), obj(g_fh), obj(o.oh), 1, off, len};
}
std::string lockargs(const Owner& o, bool excl, uint64_t off, uint64_t len, bool block = false) {
  return encode(xdr_nlm4_lockargs, nlm4_lockargs{obj(g_cookie), block, excl, alock(o, off, len), false, 1});
}
std::string testargs(const Owner& o, uint64_t off, uint64_t len) {
  return encode(xdr_nlm4_testargs, nlm4_testargs{obj(g_cookie), true, alock(o, off, len)});
}
std::string unlockargs(const Owner& o, uint64_t off, uint64_t len) {
  return encode(xdr_nlm4_unlockargs, nlm4_unlockargs{obj(g_cookie), alock(o, off, len)});
}
std::string cancargs(const Owner& o, uint64_t off, uint64_t len) {
  return encode(xdr_nlm4_cancargs, nlm4_cancargs{obj(g_cookie), true, true, alock(o, off, len)});
}
std::string shareargs(const Owner& o, nlm4_fsh_access acc, nlm4_fsh_mode deny) {
  return encode(xdr_nlm4_shareargs,
                nlm4_shareargs{obj(g_cookie), {const_cast<char*>(o.name.c_str()), obj(g_fh), obj(o.oh), deny, acc}, false});
}
std::string notify(const Owner& o) {
  return encode(xdr_nlm4_notify, nlm4_notify{const_cast<char*>(o.name.c_str()), 3});
}
std::string sm_notify(const Owner& o) {
  return encode(xdr_sm_stat_chge, sm_stat_chge{const_cast<char*>(o.name.c_str()), 3});
}
std::string sm_name_args(const Owner& o) { return encode(xdr_sm_name, sm_name{const_cast<char*>(o.name.c_str())}); }
std::string mon_args(const Owner& o) {
  sm_mon m{};
  m.mon_id.mon_name = const_cast<char*>(o.name.c_str());
  m.mon_id.my_id.my_name = const_cast<char*>("localhost");
  m.mon_id.my_id.my_prog = 100021;
  m.mon_id.my_id.my_vers = 4;
  m.mon_id.my_id.my_proc = 16;
  return encode(xdr_sm_mon, m);
}
std::string res_args(nlm4_stats st) { return encode(xdr_nlm4_res, nlm4_res{obj(g_cookie), {st}}); }

struct Record {
  uint8_t selector, flags;
  std::string args;
};

void write(const std::string& dir, const std::string& name, const std::vector<Record>& records) {
  std::string bytes;
  for (const auto& r : records) {
    bytes += static_cast<char>(r.selector);
    bytes += static_cast<char>(r.flags);
    bytes += static_cast<char>(r.args.size() >> 8);
    bytes += static_cast<char>(r.args.size() & 0xff);
    bytes += r.args;
  }
  std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
}

// A handed-over lock table (nlm_volume_handover_fuzzer's input).
void write_handover(const std::string& dir, const std::string& name,
                    const nasd::nlm::VolumeHandover& h) {
  std::vector<uint8_t> bytes = nasd::nlm::encode_handover(h);
  std::ofstream(dir + "/" + name, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void write_raw(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::ofstream(dir + "/" + name, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

constexpr uint8_t kNsm = kNlmProcs;  // NSM procedure 0's selector

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_nlm_fuzz_seeds DIR\n");
    return 2;
  }
  std::string d = argv[1];
  write(d, "lock-contend", {{2, 0, lockargs(a, true, 0, 100)}, {1, 1, testargs(b, 50, 10)},
                            {2, 1, lockargs(b, true, 50, 10, true)}, {4, 0, unlockargs(a, 0, 0)},
                            {3, 1, cancargs(b, 50, 10)}});
  write(d, "lock-split", {{2, 0, lockargs(a, false, 0, 0)}, {2, 0, lockargs(a, true, 10, 10)},
                          {4, 0, unlockargs(a, 5, 3)}, {1, 1, testargs(b, 0, 0)}});
  write(d, "share", {{20, 0, shareargs(a, NLM4_FSA_R, NLM4_FSM_DW)}, {20, 1, shareargs(b, NLM4_FSA_W, NLM4_FSM_DN)},
                     {21, 0, shareargs(a, NLM4_FSA_R, NLM4_FSM_DW)}, {20, 1, shareargs(b, NLM4_FSA_RW, NLM4_FSM_DRW)}});
  write(d, "notify", {{2, 0, lockargs(a, true, 0, 0)}, {kNsm + 6, 0, sm_notify(a)}, {2, 1, lockargs(b, true, 0, 0)},
                      {23, 1, notify(b)}});
  write(d, "nsm", {{kNsm + 0, 0, ""}, {kNsm + 1, 0, sm_name_args(a)}, {kNsm + 2, 0, mon_args(a)},
                   {kNsm + 3, 0, encode(xdr_sm_mon_id, sm_mon_id{const_cast<char*>("client-a"), {const_cast<char*>("localhost"), 100021, 4, 16}})},
                   {kNsm + 4, 0, encode(xdr_sm_my_id, sm_my_id{const_cast<char*>("localhost"), 100021, 4, 16})},
                   {kNsm + 5, 0, ""}});
  write(d, "msg", {{7, 0, lockargs(a, true, 0, 10)}, {6, 1, testargs(b, 0, 10)}, {9, 0, unlockargs(a, 0, 10)},
                   {8, 1, cancargs(b, 0, 10)}, {15, 0, res_args(NLM4_DENIED)}, {12, 0, res_args(NLM4_GRANTED)}});
  write(d, "nm-lock-granted", {{22, 0, lockargs(a, true, 0, 1)}, {5, 0, testargs(a, 0, 1)}, {0, 4, ""},
                               {2, 2, lockargs(a, true, 0, 1)}, {2, 3, lockargs(b, true, 0, 1)}});
  namespace nlm = nasd::nlm;
  const nlm::FileId f{7, 42, 1}, g{7, 43, 2};
  const nlm::LockOwner x{"client-a", 1, "oh-a", "10.0.0.1"}, y{"client-b", 2, "oh-b", "10.0.0.2"};
  nlm::VolumeHandover h;
  h.volume = 7;
  write_handover(d, "handover-empty", h);
  h.table.locks = {{f, x, true, {0, 100}}, {f, y, false, {200, nlm::ByteRange::kToEof}},
                   {g, x, false, {0, 10}}, {g, y, false, {5, 20}}};
  h.table.grace_left_ms = 30000;
  h.clients = {{"client-a", "10.0.0.1"}, {"client-b", "10.0.0.2"}};
  write_handover(d, "handover-locks", h);
  h.table.waiters = {{{f, y, true, {50, 60}}, "fh-bytes", "cookie", "10.0.0.2"}};
  h.table.shares = {{f, "client-a", "share", nlm::ShareAccess::Read, nlm::ShareDeny::Write, "10.0.0.1"},
                    {g, "client-b", "share", nlm::ShareAccess::ReadWrite, nlm::ShareDeny::None, "10.0.0.2"}};
  write_handover(d, "handover-full", h);
  // The status monitor's files (nlm_status_files_fuzzer): state, a zero byte, the client log.
  write_raw(d, "status-empty", std::string(1, '\0'));
  write_raw(d, "status-log", std::string("7\n", 2) + std::string(1, '\0') +
                                 "10.0.0.1 client-a\n10.0.0.2 client-b\n- 10.0.0.1 client-a\n"
                                 "10.0.0.2 client-b\n10.0.0.3 client-c called\n10.0.0.4\n");
  return 0;
}
