// A small client of etcd's JSON gateway over HTTP(S), through libcurl: POSTs a request body to
// one of the members and returns the reply body. It knows which failures mean "try another
// member" (no connection, a timeout, a member without a leader or that cannot reach a quorum:
// gRPC Unavailable/DeadlineExceeded) and which are answers (NotFound, InvalidArgument...).
//
// With a user (EtcdOptions::user) it authenticates first and sends the token in the
// Authorization header of every call; a call refused as Unauthenticated (the token expired, or
// etcd restarted) authenticates again once and is retried.
//
// Bounds: every call ends by its deadline (each member's attempt gets a share of what is
// left); a reply is cut off past etcd::kMaxReplyBytes; only http and https are spoken, no
// redirects are followed. Calls are serialized (one connection cache, reused between calls).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "cluster/membership/authority_options.h"
#include "cluster/membership/etcd_codec.h"

namespace nasd::membership {

class EtcdClient {
 public:
  struct Reply {
    enum class Kind {
      Ok,           // HTTP 200: `body` is the reply
      Refused,      // etcd answered with an error that another member would repeat: `error`
      Unreachable,  // no member answered usefully by the deadline: `failure` says why
    };
    Kind kind = Kind::Unreachable;
    std::string body;
    etcd::ErrorReply error;
    std::string failure;
    bool ok() const { return kind == Kind::Ok; }
  };

  // Throws std::invalid_argument when there is no endpoint or one is not an http(s) URL, and
  // std::runtime_error when the password file cannot be read or is open to other users.
  explicit EtcdClient(EtcdOptions options);
  ~EtcdClient();

  // POSTs `body` to `path` (e.g. "/v3/kv/range").
  Reply call(const std::string& path, const std::string& body,
             std::chrono::steady_clock::time_point deadline);

  const EtcdOptions& options() const { return options_; }

 private:
  struct Attempt {
    bool transport_ok = false;
    long status = 0;
    std::string body, failure;
  };
  Attempt post(const std::string& url, const std::string& body, std::chrono::milliseconds limit,
               bool with_token);
  // Gets a token from endpoint `i` (mu_ held). False: *reply says why (Refused: wrong user or
  // password; Unreachable: try another member).
  bool authenticate(size_t i, std::chrono::milliseconds limit, Reply* reply);

  const EtcdOptions options_;
  std::mutex mu_;
  void* curl_ = nullptr;   // CURL*, guarded by mu_
  size_t preferred_ = 0;   // the endpoint that answered last, guarded by mu_
  std::string password_;   // read once from options_.password_file
  std::string token_;      // the auth token, guarded by mu_ ("" until authenticated)
};

}  // namespace nasd::membership
