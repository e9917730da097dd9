// nasd-link-probe: what one request and its answer across the cluster interconnect cost in CPU
// on this machine when neither side does any volume work. It is the floor under the extra
// cost of a forwarded NFS call (bench/cluster_forwarding.sh measures that whole cost), split in
// two: what the kernel's TCP loopback costs by itself, and what nasd's link adds to it.
//
//   tcp   bare TCP over loopback: fixed-size messages, one reading thread on each side, no
//         framing and no MAC; the answering side sends the answers to a burst of requests in one
//         write, as the interconnect server does.
//   link  nasd's interconnect: a PeerClient calling an InterconnectServer over an authenticated
//         link (sealed frames), whose handler answers at once on the connection's thread, as
//         the owner answers a cheap forwarded call (VolumeServer::try_inline).
//
// Both keep `in_flight` requests outstanding on one connection: the thread that reads an answer
// sends the next request, as a forwarder resumes a call on the thread that read its answer.
// Everything runs in this one process, so its CPU time (getrusage: user + system, all threads)
// and its context switches are both ends' together, divided by the round trips made.
//
// Usage: nasd-link-probe [--seconds S] [--in-flight N[,N...]] [--request-bytes B]
//                        [--reply-bytes B]
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cluster/interconnect/interconnect_server.h"
#include "cluster/interconnect/peer_client.h"
#include "util/net.h"

namespace {

using namespace std::chrono_literals;
using nasd::interconnect::CallOutcome;
using nasd::interconnect::IncomingRequest;
using nasd::interconnect::InterconnectServer;
using nasd::interconnect::InterconnectServerOptions;
using nasd::interconnect::MessageType;
using nasd::interconnect::PeerClient;
using nasd::interconnect::PeerClientOptions;

struct Options {
  double seconds = 5;
  std::vector<size_t> in_flight = {1, 16};
  size_t request_bytes = 200;  // about a forwarded GETATTR or LOOKUP in fs/call's codec
  size_t reply_bytes = 200;
};

struct Usage {
  double cpu_us = 0;
  double switches = 0;
};

Usage process_usage() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto us = [](const timeval& tv) { return double(tv.tv_sec) * 1e6 + double(tv.tv_usec); };
  return {us(ru.ru_utime) + us(ru.ru_stime), double(ru.ru_nvcsw + ru.ru_nivcsw)};
}

struct Result {
  double round_trips_per_s = 0;
  double cpu_us = 0;
  double switches = 0;
};

// Lets the transport warm up, then measures `seconds` of round trips counted by `done`.
Result measure(const Options& o, const std::atomic<uint64_t>& done) {
  std::this_thread::sleep_for(500ms);
  const Usage u0 = process_usage();
  const uint64_t n0 = done.load();
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
  const Usage u1 = process_usage();
  const uint64_t n1 = done.load();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double n = double(n1 - n0);
  if (n == 0) throw std::runtime_error("no round trip completed");
  return {n / elapsed, (u1.cpu_us - u0.cpu_us) / n, (u1.switches - u0.switches) / n};
}

void check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

// Reads what the socket has and hands every whole message of `size` bytes to `on_message`
// (then calls `after_burst`), until the peer closes.
void read_messages(int fd, size_t size, const std::function<void()>& on_message,
                   const std::function<void()>& after_burst) {
  // Room for at least two whole messages, however large --request-bytes and --reply-bytes are.
  std::vector<uint8_t> buf(std::max<size_t>(256 * 1024, 2 * size));
  size_t have = 0;
  for (;;) {
    const ssize_t k = ::recv(fd, buf.data() + have, buf.size() - have, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return;
    have += static_cast<size_t>(k);
    const size_t whole = have / size;
    for (size_t i = 0; i < whole; ++i) on_message();
    have -= whole * size;
    std::memmove(buf.data(), buf.data() + whole * size, have);
    after_burst();
  }
}

Result run_tcp(const Options& o, size_t in_flight) {
  std::string error;
  uint16_t port = 0;
  const int listener = nasd::util::listen_tcp("127.0.0.1", 0, &port, &error, 1);
  check(listener >= 0, "listen: " + error);
  // Blocking and TCP_NODELAY, as the link's sockets are.
  const int client = nasd::util::connect_tcp("127.0.0.1", port, 5s, &error);
  check(client >= 0, "connect: " + error);
  const int server = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  check(server >= 0, std::string("accept: ") + std::strerror(errno));
  ::close(listener);
  // The one connection accepted must be the probe's own client, not another process that
  // found the port first: the client's local address is the accepted socket's peer.
  sockaddr_storage mine{}, theirs{};
  socklen_t mine_len = sizeof mine, theirs_len = sizeof theirs;
  check(::getsockname(client, reinterpret_cast<sockaddr*>(&mine), &mine_len) == 0 &&
            ::getpeername(server, reinterpret_cast<sockaddr*>(&theirs), &theirs_len) == 0 &&
            mine_len == theirs_len && std::memcmp(&mine, &theirs, mine_len) == 0,
        "accept: the connection accepted is not the probe's own (another process connected)");
  const int one = 1;
  ::setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);

  const std::vector<uint8_t> request(o.request_bytes, 0x11);
  std::thread answering([&] {
    std::vector<uint8_t> answers;
    read_messages(
        server, o.request_bytes, [&] { answers.resize(answers.size() + o.reply_bytes, 0x22); },
        [&] {
          if (!answers.empty()) nasd::util::send_all(server, answers.data(), answers.size());
          answers.clear();
        });
  });
  std::atomic<uint64_t> done{0};
  std::atomic<bool> stopping{false};
  std::thread asking([&] {
    read_messages(
        client, o.reply_bytes,
        [&] {
          done.fetch_add(1, std::memory_order_relaxed);
          if (!stopping.load(std::memory_order_relaxed))
            nasd::util::send_all(client, request.data(), request.size());
        },
        [] {});
  });
  for (size_t i = 0; i < in_flight; ++i) nasd::util::send_all(client, request.data(), request.size());
  const Result r = measure(o, done);
  stopping = true;
  ::shutdown(client, SHUT_RDWR);
  ::shutdown(server, SHUT_RDWR);
  asking.join();
  answering.join();
  ::close(client);
  ::close(server);
  return r;
}

Result run_link(const Options& o, size_t in_flight) {
  std::vector<uint8_t> key(32);
  std::random_device rd;
  for (auto& b : key) b = static_cast<uint8_t>(rd());
  InterconnectServerOptions so;
  so.cluster_name = "probe";
  so.local_node = "owner";
  so.credentials = {key, "owner"};
  InterconnectServer server(so);
  const std::vector<uint8_t> reply(o.reply_bytes, 0x22);
  server.set_handler(MessageType::VolumeCall,
                     [&reply](IncomingRequest request) { request.responder.reply(reply); });
  server.start();

  PeerClientOptions co;
  co.port = server.port();
  co.cluster_name = "probe";
  co.local_node = "front";
  co.expected_peer = "owner";
  co.credentials = {key, "front"};
  PeerClient client(co);
  client.start();
  if (!client.wait_connected(5s)) throw std::runtime_error("link: " + client.last_error());

  std::atomic<uint64_t> done{0};
  std::atomic<uint64_t> failed{0};
  std::atomic<bool> stopping{false};
  const std::vector<uint8_t> request(o.request_bytes, 0x11);
  std::function<void()> ask = [&] {
    client.call_async(MessageType::VolumeCall, request, 5s, [&](CallOutcome outcome) {
      // Calls still in flight when the probe stops fail with "stopped": not counted.
      const bool stopped = stopping.load(std::memory_order_relaxed);
      if (!outcome.ok()) {
        if (!stopped) failed.fetch_add(1);
        return;  // not a round trip, and no next request
      }
      done.fetch_add(1, std::memory_order_relaxed);
      if (!stopped) ask();
    });
  };
  for (size_t i = 0; i < in_flight; ++i) ask();
  const Result r = measure(o, done);
  stopping = true;
  client.stop();
  server.stop();
  if (failed.load() > 0)
    std::cerr << "link: " << failed.load() << " calls failed (" << client.last_error() << ")\n";
  return r;
}

// A whole decimal number, or invalid_argument naming the option (std::stoul alone would accept
// "12abc" and say only "stoul" for "abc").
unsigned long whole_number(const std::string& option, const std::string& text) {
  if (text.empty() || text.size() > 9 ||
      text.find_first_not_of("0123456789") != std::string::npos)
    throw std::invalid_argument(option + ": a whole number, not '" + text + "'");
  return std::stoul(text);
}

std::vector<size_t> parse_list(const std::string& text) {
  std::vector<size_t> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos
                                                                            : comma - start);
    const unsigned long v = whole_number("--in-flight", item);
    if (v == 0 || v > 4096) throw std::invalid_argument("--in-flight: 1 to 4096, not " + item);
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

size_t parse_bytes(const std::string& name, const std::string& text) {
  const unsigned long v = whole_number(name, text);
  if (v == 0 || v > (1u << 20)) throw std::invalid_argument(name + ": 1 to 1048576 bytes");
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + arg);
    const std::string value = argv[++i];
    if (arg == "--seconds") {
      size_t used = 0;
      try {
        o.seconds = std::stod(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != value.size() || !(o.seconds > 0 && o.seconds <= 600))
        throw std::invalid_argument("--seconds: more than 0, at most 600");
    } else if (arg == "--in-flight") {
      o.in_flight = parse_list(value);
    } else if (arg == "--request-bytes") {
      o.request_bytes = parse_bytes(arg, value);
    } else if (arg == "--reply-bytes") {
      o.reply_bytes = parse_bytes(arg, value);
    } else {
      throw std::invalid_argument("unknown option " + arg);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "nasd-link-probe: " << e.what()
              << "\nusage: nasd-link-probe [--seconds S] [--in-flight N[,N...]]"
                 " [--request-bytes B] [--reply-bytes B]\n";
    return 2;
  }
  try {
    std::printf("%-6s %9s %14s %22s %24s\n", "link", "in_flight", "round_trips/s",
                "cpu_us_per_round_trip", "switches_per_round_trip");
    for (size_t w : o.in_flight) {
      for (const char* kind : {"tcp", "link"}) {
        const Result r = std::strcmp(kind, "tcp") == 0 ? run_tcp(o, w) : run_link(o, w);
        std::printf("%-6s %9zu %14.0f %22.1f %24.2f\n", kind, w, r.round_trips_per_s, r.cpu_us,
                    r.switches);
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "nasd-link-probe: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
