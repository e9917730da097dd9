// libFuzzer target: feeds arbitrary bytes as the arguments of every NLM v4 and NSM procedure to
// the real services (lock state in a scratch folder, calls to clients turned off), and checks
// that every accepted reply decodes again as its result type. Input format: fuzz_input.h.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/fuzz/call_records.h"
#include "server/nfs/exports/exports.h"
#include "server/nfs/handle/handle_codec.h"
#include "server/nlm/lock_state.h"
#include "server/nlm/nlm_service.h"
#include "server/nlm/nsm_service.h"
#include "server/nlm/xdr/nlm4_prot.h"
#include "server/nlm/xdr/sm_prot.h"
#include "tests/fuzz/nlm/fuzz_input.h"
#include "tests/fuzz/nlm/scratch_dir.h"
#include "util/config.h"

namespace nasd::nlm::fuzz {
namespace {

const char* kConfig = R"(
[volume main]
id = 7
[volume other]
id = 8
[export /r/main]
volume = main
clients = 127.0.0.0/8, ::1
access = rw
[export /r/other]
volume = other
clients = 127.0.0.1
access = ro
)";

union AnyResult {
  nlm4_res res;
  nlm4_testres testres;
  nlm4_shareres shareres;
  sm_stat_res stat_res;
  sm_stat stat;
};

xdrproc_t result_of(bool nlm, uint32_t proc) {
  if (nlm) {
    switch (proc) {
      case 1: return (xdrproc_t)xdr_nlm4_testres;
      case 2: case 3: case 4: case 5: case 22: return (xdrproc_t)xdr_nlm4_res;
      case 20: case 21: return (xdrproc_t)xdr_nlm4_shareres;
      default: return (xdrproc_t)xdr_void;
    }
  }
  switch (proc) {
    case 1: case 2: return (xdrproc_t)xdr_sm_stat_res;
    case 3: case 4: return (xdrproc_t)xdr_sm_stat;
    default: return (xdrproc_t)xdr_void;
  }
}

void check_decodes(xdrproc_t routine, const std::vector<uint8_t>& bytes) {
  AnyResult value;
  std::memset(&value, 0, sizeof value);
  XDR x;
  xdrmem_create(&x, reinterpret_cast<char*>(const_cast<uint8_t*>(bytes.data())),
                static_cast<u_int>(bytes.size()), XDR_DECODE);
  bool ok = routine(&x, &value) && xdr_getpos(&x) == bytes.size();
  xdr_destroy(&x);
  xdr_free(routine, reinterpret_cast<char*>(&value));
  if (!ok) {
    std::fprintf(stderr, "reply of %zu bytes does not decode as its result type\n", bytes.size());
    std::abort();
  }
}

sockaddr_storage peer_for(int which) {
  static const char* v4[] = {"127.0.0.1", "127.0.0.2", "10.1.2.3"};
  sockaddr_storage ss{};
  if (which < 3) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
    sin->sin_family = AF_INET;
    inet_pton(AF_INET, v4[which], &sin->sin_addr);
  } else {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
    sin6->sin6_family = AF_INET6;
    sin6->sin6_addr = in6addr_loopback;
  }
  return ss;
}


// A fresh lock state per input, so inputs replay deterministically (only the state number
// carries over in the scratch folder, and no reply depends on it but STAT's number).
struct World {
  World() {
    NlmOptions o;
    o.grace_ms = 0;
    o.send_callbacks = false;
    o.max_locks = 256;
    o.max_hosts = 16;
    std::filesystem::remove(scratch_dir() + "/sm/clients");
    state = std::make_shared<LockState>(o, scratch_dir() + "/sm");
    nlm = std::make_unique<NlmService>(state, codec(), exports(), [](uint32_t id) { return id == 7; });
    nsm = std::make_unique<NsmService>(state);
  }

  static std::shared_ptr<nfs::Exports> exports() {
    static std::shared_ptr<nfs::Exports> e = nfs::Exports::from_config(Config::parse(kConfig));
    return e;
  }
  static std::shared_ptr<nfs::HandleCodec> codec() {
    static auto c = std::make_shared<nfs::HandleCodec>(std::vector<uint8_t>(32, kHandleKeyByte));
    return c;
  }

  void patch_handles(std::vector<uint8_t>* args) const {
    for (size_t i = 0; i + 4 + nfs::FileHandle::kSize <= args->size(); i += 4) {
      uint8_t* p = args->data() + i;
      if (p[0] != 0 || p[1] != 0 || p[2] != 0 || p[3] != 32 || p[4] != kHandleMarker) continue;
      nfs::FileHandle fh = codec()->encode(7 + p[5] % 2, {p[6], 1});
      std::memcpy(p + 4, fh.bytes.data(), nfs::FileHandle::kSize);
      i += nfs::FileHandle::kSize;
    }
  }

  std::shared_ptr<LockState> state;
  std::unique_ptr<NlmService> nlm;
  std::unique_ptr<NsmService> nsm;
};

void run_call(World& world, uint8_t selector, uint8_t flags, std::vector<uint8_t> args) {
  world.patch_handles(&args);
  const uint32_t pick = selector % (kNlmProcs + kNsmProcs);
  const bool is_nlm = pick < kNlmProcs;
  rpc::CallContext call;
  call.proc = is_nlm ? pick : pick - kNlmProcs;
  call.prog = is_nlm ? kNlmProgram : kNsmProgram;
  call.vers = is_nlm ? ((flags & 4) ? 1 : 4) : ((flags & 4) ? 2 : 1);
  call.peer = peer_for(flags & 3);
  call.cred.flavor = rpc::kAuthSys;
  std::vector<uint8_t> results;
  rpc::Service& service = is_nlm ? static_cast<rpc::Service&>(*world.nlm) : *world.nsm;
  rpc::DispatchResult r = service.dispatch(call, args, &results);
  if (r.kind == rpc::DispatchResult::Accepted && r.accept == rpc::AcceptStat::Success)
    check_decodes(result_of(is_nlm, call.proc), results);
  static const bool trace = std::getenv("NASD_FUZZ_TRACE") != nullptr;
  if (trace) {
    uint32_t status = results.size() >= 8 ? ntohl(*reinterpret_cast<const uint32_t*>(results.data() + results.size() - 4)) : 0;
    std::fprintf(stderr, "%s %s: accept %u, last word %u, %zu reply bytes\n", is_nlm ? "NLM" : "NSM",
                 std::string(service.proc_name(call.proc)).c_str(), static_cast<unsigned>(r.accept),
                 status, results.size());
  }
}

}  // namespace
}  // namespace nasd::nlm::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nasd::nlm::fuzz;
  World world;
  nasd::fuzz::for_each_call_record(data, size, kMaxCalls,
                                   [&](uint8_t selector, uint8_t flags, std::vector<uint8_t> args) {
                                     run_call(world, selector, flags, std::move(args));
                                   });
  return 0;
}
