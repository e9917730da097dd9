// A tiny RPC program for the transport tests (program 0x20000099, versions 1..2). Its
// procedures exercise what the transport must handle: argument decoding (GARBAGE_ARGS), slow
// calls (out-of-order replies, back-pressure), non-idempotent calls (duplicate request
// cache), credentials, large replies and a procedure that throws; and, when a test turns it on,
// running calls on the event loop (dispatch_inline).
#pragma once

#include <arpa/inet.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "server/rpc/service.h"

namespace nasd::rpc::testing {

inline constexpr uint32_t kEchoProgram = 0x20000099;

enum EchoProc : uint32_t {
  kNull = 0,
  kEcho = 1,       // opaque<> -> the same opaque<>
  kSleepEcho = 2,  // uint32 ms, opaque<> -> opaque<> after sleeping; cacheable
  kIncrement = 3,  // uint32 delta -> uint32 counter after adding; cacheable
  kWhoAmI = 4,     // void -> flavor, uid, gid, gids<>, machine name as opaque<>
  kBig = 5,        // uint32 n -> opaque<n> of bytes i % 251
  kThrow = 6,      // throws: the transport must answer SYSTEM_ERR
  kBigSlices = 7,  // as kBig, but the opaque's bytes travel as DispatchResult::tail in
                   // 4 KiB pieces of a buffer the service keeps (a READ from cache blocks)
  kNumProcs = 8,
};

class EchoService : public Service {
 public:
  uint32_t program() const override { return kEchoProgram; }
  std::string_view program_name() const override { return "echo"; }
  uint32_t low_version() const override { return 1; }
  uint32_t high_version() const override { return 2; }
  uint32_t num_procs() const override { return kNumProcs; }
  std::string_view proc_name(uint32_t proc) const override {
    static constexpr std::string_view names[] = {"null",   "echo", "sleep_echo", "increment",
                                                 "whoami", "big",  "throw", "big_slices"};
    return proc < kNumProcs ? names[proc] : "?";
  }
  bool cacheable(uint32_t proc) const override { return proc == kSleepEcho || proc == kIncrement; }

  DispatchResult dispatch(const CallContext& call, std::span<const uint8_t> args,
                          std::vector<uint8_t>* results) override {
    executions++;
    int now = ++concurrent;
    int seen = max_concurrent.load();
    while (now > seen && !max_concurrent.compare_exchange_weak(seen, now)) {
    }
    DispatchResult r = run(call, args, results);
    --concurrent;
    return r;
  }

  // Run-to-completion (off unless a test turns it on): echo, increment, null and throw may run
  // on the event loop; `inline_would_block` makes every attempt refuse instead.
  std::optional<DispatchResult> dispatch_inline(const CallContext& call,
                                                std::span<const uint8_t> args,
                                                std::vector<uint8_t>* results) override {
    if (!inline_enabled) return std::nullopt;
    if (call.proc != kNull && call.proc != kEcho && call.proc != kIncrement && call.proc != kThrow)
      return std::nullopt;
    if (inline_would_block) {
      inline_refusals++;
      return std::nullopt;
    }
    inline_runs++;
    // Holds the event loop itself (a test of what must not need the loop).
    if (int ms = inline_sleep_ms.load(); ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return run(call, args, results);
  }

  std::atomic<bool> inline_enabled{false};
  std::atomic<bool> inline_would_block{false};
  std::atomic<int> inline_sleep_ms{0};  // an inline run first sleeps this long, on the loop
  std::atomic<int> inline_runs{0};
  std::atomic<int> inline_refusals{0};
  std::atomic<int> executions{0};
  std::atomic<int> concurrent{0};
  std::atomic<int> max_concurrent{0};
  std::atomic<uint32_t> counter{0};

 private:
  static DispatchResult garbage() {
    DispatchResult r;
    r.accept = AcceptStat::GarbageArgs;
    return r;
  }
  static bool get_u32(std::span<const uint8_t>& in, uint32_t* v) {
    if (in.size() < 4) return false;
    uint32_t be;
    std::memcpy(&be, in.data(), 4);
    *v = ntohl(be);
    in = in.subspan(4);
    return true;
  }
  static bool get_opaque(std::span<const uint8_t>& in, std::span<const uint8_t>* out) {
    uint32_t len;
    if (!get_u32(in, &len) || len > in.size()) return false;
    size_t padded = (size_t{len} + 3) & ~size_t{3};
    if (padded > in.size()) return false;
    *out = in.subspan(0, len);
    in = in.subspan(padded);
    return true;
  }
  static void put_u32(std::vector<uint8_t>* out, uint32_t v) {
    uint32_t be = htonl(v);
    const auto* p = reinterpret_cast<const uint8_t*>(&be);
    out->insert(out->end(), p, p + 4);
  }
  static void put_opaque(std::vector<uint8_t>* out, std::span<const uint8_t> bytes) {
    put_u32(out, static_cast<uint32_t>(bytes.size()));
    out->insert(out->end(), bytes.begin(), bytes.end());
    out->resize(out->size() + ((4 - bytes.size() % 4) % 4), 0);
  }

  DispatchResult run(const CallContext& call, std::span<const uint8_t> in,
                     std::vector<uint8_t>* out) {
    std::span<const uint8_t> bytes;
    uint32_t v = 0;
    switch (call.proc) {
      case kNull:
        return in.empty() ? DispatchResult{} : garbage();
      case kEcho:
        if (!get_opaque(in, &bytes) || !in.empty()) return garbage();
        put_opaque(out, bytes);
        return {};
      case kSleepEcho:
        if (!get_u32(in, &v) || v > 5000 || !get_opaque(in, &bytes) || !in.empty())
          return garbage();
        std::this_thread::sleep_for(std::chrono::milliseconds(v));
        put_opaque(out, bytes);
        return {};
      case kIncrement:
        if (!get_u32(in, &v) || !in.empty()) return garbage();
        put_u32(out, counter += v);
        return {};
      case kWhoAmI: {
        put_u32(out, call.cred.flavor);
        put_u32(out, call.cred.uid);
        put_u32(out, call.cred.gid);
        put_u32(out, static_cast<uint32_t>(call.cred.gids.size()));
        for (uint32_t g : call.cred.gids) put_u32(out, g);
        put_opaque(out, {reinterpret_cast<const uint8_t*>(call.cred.machine.data()),
                         call.cred.machine.size()});
        return {};
      }
      case kBig: {
        if (!get_u32(in, &v) || v > (8u << 20) || !in.empty()) return garbage();
        std::vector<uint8_t> data(v);
        for (uint32_t i = 0; i < v; ++i) data[i] = static_cast<uint8_t>(i % 251);
        put_opaque(out, data);
        return {};
      }
      case kThrow:
        throw std::runtime_error("procedure failed");
      case kBigSlices: {
        if (!get_u32(in, &v) || v > (8u << 20) || !in.empty()) return garbage();
        // Pieces with a gap between them, so that none merges with the next: one iovec each.
        constexpr size_t kPiece = 4096, kGap = 64;
        const size_t pieces = (v + kPiece - 1) / kPiece;
        auto store = std::make_shared<std::vector<uint8_t>>(pieces * (kPiece + kGap));
        DispatchResult r;
        for (size_t i = 0, done = 0; i < pieces; ++i) {
          uint8_t* p = store->data() + i * (kPiece + kGap);
          const size_t n = std::min<size_t>(kPiece, v - done);
          for (size_t k = 0; k < n; ++k) p[k] = static_cast<uint8_t>((done + k) % 251);
          r.tail.append(p, n);
          done += n;
        }
        const size_t pad = (4 - v % 4) % 4;
        r.tail.append(util::ByteSlices::zeros(pad), pad);
        r.tail.owner = store;
        put_u32(out, v);
        return r;
      }
    }
    return garbage();
  }
};

}  // namespace nasd::rpc::testing
