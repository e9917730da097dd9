// MirrorServer: the partner side of the mirror link. It keeps a region file laid out exactly
// like the primary's (same size, same record positions), so the partner can later replay it
// with the ordinary Journal code, or dump it. Acks are cumulative and sent once per batch of
// received frames, after the batch is durable for the mode.
//
// Nothing on the port is trusted beyond what the cluster key proves:
// - every connection runs the link handshake (util/link_handshake.h) on its own thread within
//   `handshake_timeout`; one that fails is closed without a word, so an idle or unauthenticated
//   connection can never hold the port;
// - one primary at a time: an authenticated new connection replaces the current one (the
//   primary reconnecting after a blip must not wait for its dead connection to time out);
// - every frame after the handshake carries a tag (util/link_seal.h);
// - the hello's log size is bounded (`max_log_size`) and every record's position and length is
//   checked against the region before a byte is copied;
// - no exception leaves a server thread: it is logged and the connection closed.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nvram/mirror.h"
#include "nvram/mirror_protocol.h"
#include "nvram/region.h"
#include "util/handshake_slots.h"
#include "util/link_handshake.h"

namespace nasd::nvram {

struct MirrorServerOptions {
  link::Credentials credentials;  // required
  // Name of the primary that may connect (a pair: the partner); empty: any holder of the key.
  std::string primary;
  // Source addresses that may connect at all (IPv4 text); unset: any.
  std::function<bool(const std::string&)> address_allowed;
  std::chrono::milliseconds handshake_timeout{2000};
  // A peer that stops reading our acks fails the send after this long.
  std::chrono::milliseconds send_timeout{5000};
  // Largest log a primary may ask us to copy (the region file is made this large).
  uint64_t max_log_size = 64ull << 30;
  // Connections still in their handshake at once, from one source address and in all; more
  // are closed on arrival. Per source, so that one host's flood never keeps the primary out
  // (util/handshake_slots.h).
  size_t max_handshakes_per_source = 2;
  size_t max_handshakes = 32;
};

class MirrorServer {
 public:
  // Opens `region_path` if it exists (to resume after a restart); it is (re)created when an
  // authenticated primary says hello with another identity.
  MirrorServer(std::string region_path, DurabilityMode mode, MirrorServerOptions options);
  ~MirrorServer();  // stop() and joins every connection thread

  // Binds host:port (port 0 picks one). Returns the port; throws std::runtime_error.
  uint16_t listen(const std::string& host, uint16_t port);
  // Accepts connections until stop(), then joins their threads. Call from one thread.
  void serve();
  // Makes serve() return soon (safe from a signal-handling thread).
  void stop();

  // Position up to which this mirror holds records.
  uint64_t tail() const;
  // Connections closed without being served: failed handshake, refused address, too many.
  uint64_t refused() const { return refused_.load(); }

  // One frame from the authenticated primary (the connection's protocol step, also what the
  // fuzzer drives): "" or why the connection must end. `*greeted` is the connection's state
  // (a hello was taken), `*got_records` is set when records were taken (an ack is due), and
  // `*reply` gets the answer frame, untagged, if there is one.
  std::string on_frame(const wire::Frame& frame, bool* greeted, bool* got_records,
                       std::vector<uint8_t>* reply);

 private:
  struct Connection {
    int fd = -1;
    std::string source;  // the remote address, holding a handshake slot until authenticated
    std::thread thread;
    std::atomic<bool> finished{false};
  };

  void connection_thread(Connection* conn);
  void serve_authenticated(int fd, const std::string& source);
  void serve_connection(int fd, link::Session& session);
  std::string handle_hello(const MirrorHello& hello, uint64_t* resume);
  std::string handle_records(const std::vector<uint8_t>& body);
  std::string handle_trim(uint64_t head);
  // Stores [head_, tail) in the image's header, or, when head_ is too far from what it holds
  // to walk there, makes the image afresh, empty at head_ (tail_ = head_: nothing it held is
  // still wanted). Under mu_.
  void set_bounds(uint64_t tail);
  bool persist_and_ack(int fd, link::FrameSealer* sealer);
  void reap_finished();
  void refuse(const std::string& why);

  const std::string path_;
  const DurabilityMode mode_;
  const MirrorServerOptions options_;
  std::unique_ptr<Region> region_;
  mutable std::mutex mu_;  // region state, for tail() from other threads
  uint64_t head_ = 0, tail_ = 0, persisted_ = 0;
  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> refused_{0};
  util::HandshakeSlots handshakes_;

  std::mutex conn_mu_;                 // guards the fields below
  std::condition_variable active_cv_;  // the active connection ended
  std::list<std::unique_ptr<Connection>> connections_;
  int active_fd_ = -1;                 // the primary being served, or -1
  uint64_t active_ticket_ = 0;         // the newest authenticated connection
};

}  // namespace nasd::nvram
