// The accepting side of the interconnect: listens for peer nodes, checks each one's hello
// (cluster name, protocol version) and hands every request frame to the handler registered for
// its message type. One reader thread per connection keeps the code blocking and simple; a
// handler may answer later from another thread (through its Responder), which is what lets
// replies go back out of order while slow calls run.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "cluster/interconnect/frame_stream.h"
#include "cluster/interconnect/socket.h"

namespace nasd::interconnect {

// Answers one request. Copyable and usable from any thread; the connection stays open as long
// as a Responder refers to it. If the connection dropped meanwhile, the answer is discarded
// (the caller already failed the request).
class Responder {
 public:
  Responder(std::shared_ptr<Socket> socket, uint64_t request_id)
      : socket_(std::move(socket)), request_id_(request_id) {}
  void reply(std::span<const uint8_t> payload) const;
  void unsupported() const;
  uint64_t request_id() const { return request_id_; }

 private:
  std::shared_ptr<Socket> socket_;
  uint64_t request_id_;
};

struct IncomingRequest {
  std::string peer_node;  // from the peer's hello
  MessageType type;
  std::vector<uint8_t> payload;
  Responder responder;
};

// Runs on the connection's reader thread: must not block for long (hand slow work to a pool,
// as VolumeServer does), or that peer's later requests wait behind it.
using RequestHandler = std::function<void(IncomingRequest)>;

struct InterconnectServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port (see port())
  std::string cluster_name;
  std::string local_node;
  std::chrono::milliseconds hello_timeout{2000};
  std::chrono::milliseconds send_timeout{5000};
  FrameLimits limits;
};

class InterconnectServer {
 public:
  explicit InterconnectServer(InterconnectServerOptions options);
  ~InterconnectServer();  // stop()
  InterconnectServer(const InterconnectServer&) = delete;
  InterconnectServer& operator=(const InterconnectServer&) = delete;

  // Register before start(). Requests of a type with no handler get an Unsupported answer.
  void set_handler(MessageType type, RequestHandler handler);
  // Binds and starts accepting. Throws std::runtime_error naming the address on failure.
  void start();
  // Closes the listener and every connection and joins their threads. Idempotent.
  void stop();

  uint16_t port() const { return port_; }
  size_t connection_count() const;

 private:
  struct Connection {
    std::shared_ptr<Socket> socket;
    std::thread thread;
    std::atomic<bool> finished{false};
  };

  void accept_loop();
  void serve(Connection* conn);
  bool hello(Socket& socket, std::string* peer_node);
  void reap_finished();

  const InterconnectServerOptions options_;
  std::map<MessageType, RequestHandler> handlers_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  mutable std::mutex mu_;
  std::list<std::unique_ptr<Connection>> connections_;
};

}  // namespace nasd::interconnect
