#include "cluster/membership/etcd_client.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "util/net.h"
#include "util/secret_key.h"

namespace nasd::membership {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// curl_global_init is not thread-safe: once per process, before any handle.
void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Sink {
  std::string* body;
  bool overflow = false;
};

size_t write_body(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const size_t n = size * count;
  if (sink->body->size() + n > etcd::kMaxReplyBytes) {
    sink->overflow = true;
    return 0;  // curl ends the transfer with CURLE_WRITE_ERROR
  }
  sink->body->append(data, n);
  return n;
}

// gRPC codes that another member may not repeat: this member has no leader, cannot reach a
// quorum, timed out or is stopping.
bool try_elsewhere(int code) {
  return code == 1 /*Canceled*/ || code == 2 /*Unknown*/ || code == 4 /*DeadlineExceeded*/ ||
         code == 10 /*Aborted*/ || code == 13 /*Internal*/ || code == 14 /*Unavailable*/;
}

// The first line of a file only the service's user may read.
std::string read_password_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("etcd password file " + path + ": " + std::strerror(errno));
  std::string text(1025, '\0');
  ssize_t n = -1;
  try {
    check_private_file(fd, path, "etcd password file");
    n = ::read(fd, text.data(), text.size());
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  if (n < 0) throw std::runtime_error("etcd password file " + path + ": " + std::strerror(errno));
  text.resize(static_cast<size_t>(n));
  text = text.substr(0, text.find('\n'));
  if (text.empty() || text.size() > 1024)
    throw std::runtime_error("etcd password file " + path + ": one line of 1 to 1024 bytes expected");
  return text;
}

constexpr int kUnauthenticated = 16;  // gRPC: the token is missing, expired or unknown

}  // namespace

EtcdClient::EtcdClient(EtcdOptions options) : options_(std::move(options)) {
  if (options_.endpoints.empty()) throw std::invalid_argument("etcd: no endpoints");
  for (const std::string& e : options_.endpoints) {
    if (e.rfind("http://", 0) != 0 && e.rfind("https://", 0) != 0)
      throw std::invalid_argument("etcd endpoint '" + e + "' is not an http:// or https:// URL");
  }
  if (!options_.user.empty()) password_ = read_password_file(options_.password_file);
  init_curl_once();
  curl_ = curl_easy_init();
  if (!curl_) throw std::runtime_error("etcd: curl_easy_init failed");
}

EtcdClient::~EtcdClient() {
  if (curl_) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

EtcdClient::Attempt EtcdClient::post(const std::string& url, const std::string& body,
                                     milliseconds limit, bool with_token) {
  Attempt a;
  CURL* c = static_cast<CURL*>(curl_);
  curl_easy_reset(c);  // keeps the connection cache
  Sink sink{&a.body};
  struct curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  // The gateway takes the token as the whole Authorization value (decode_authenticate made
  // sure it is one printable word).
  if (with_token && !token_.empty()) headers = curl_slist_append(headers, ("Authorization: " + token_).c_str());
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for timeouts
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(limit.count()));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(limit.count()));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  const std::string& source = options_.source_address;
  const std::string interface = "host!" + source;  // an address, never an interface name
  if (!util::is_any_address(source))
    curl_easy_setopt(c, CURLOPT_INTERFACE, interface.c_str());
  if (!options_.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options_.ca_file.c_str());
  if (!options_.cert_file.empty())
    curl_easy_setopt(c, CURLOPT_SSLCERT, options_.cert_file.c_str());
  if (!options_.key_file.empty()) curl_easy_setopt(c, CURLOPT_SSLKEY, options_.key_file.c_str());
  const CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(headers);
  if (rc != CURLE_OK) {
    a.failure = url + ": " + (sink.overflow ? "reply longer than " +
                                                  std::to_string(etcd::kMaxReplyBytes) + " bytes"
                                            : std::string(curl_easy_strerror(rc)));
    return a;
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a.status);
  a.transport_ok = true;
  return a;
}

bool EtcdClient::authenticate(size_t i, milliseconds limit, Reply* reply) {
  Attempt a = post(options_.endpoints[i] + "/v3/auth/authenticate",
                   etcd::authenticate_request(options_.user, password_), limit, false);
  if (!a.transport_ok) {
    reply->failure = a.failure;
    return false;
  }
  std::string error;
  if (a.status == 200 && etcd::decode_authenticate(a.body, &token_, &error)) return true;
  etcd::ErrorReply e;
  if (a.status != 200 && etcd::decode_error(a.body, &e) && !try_elsewhere(e.code)) {
    // A wrong user or password, or auth not enabled: every member would say the same.
    reply->kind = Reply::Kind::Refused;
    e.message = "authenticating as " + options_.user + ": " + e.message;
    reply->error = std::move(e);
    return false;
  }
  reply->failure = options_.endpoints[i] + ": authenticating as " + options_.user + ": " +
                   (a.status == 200 ? error : "HTTP " + std::to_string(a.status));
  return false;
}

EtcdClient::Reply EtcdClient::call(const std::string& path, const std::string& body,
                                   Clock::time_point deadline) {
  Reply reply;
  std::unique_lock lock(mu_, std::defer_lock);
  // Another call holds the client: wait for it, but not past our own deadline.
  while (!lock.try_lock()) {
    if (Clock::now() >= deadline) {
      reply.failure = "etcd: client busy until the deadline";
      return reply;
    }
    std::this_thread::sleep_for(milliseconds(2));
  }
  const size_t n = options_.endpoints.size();
  bool reauthenticated = false;
  // At most two rounds over the members: a member that failed fast (refused connection) may be
  // back, or the leader election that made them all refuse may be over.
  for (size_t tried = 0; tried < 2 * n; ++tried) {
    const auto now = Clock::now();
    if (now >= deadline) break;
    const size_t i = (preferred_ + tried) % n;
    // Each remaining member gets an equal share of the time left in this round, so one
    // member that hangs (cut off from the others) cannot use up the whole call.
    const size_t left_in_round = n - tried % n;
    auto share = std::chrono::duration_cast<milliseconds>(deadline - now) /
                 static_cast<int64_t>(left_in_round);
    share = std::max(share, milliseconds(50));
    share = std::min(share, std::chrono::duration_cast<milliseconds>(deadline - now));
    if (share <= milliseconds(0)) break;
    const bool auth = !options_.user.empty();
    if (auth && token_.empty() && !authenticate(i, share, &reply)) {
      if (reply.kind == Reply::Kind::Refused) return reply;
      continue;
    }
    Attempt a = post(options_.endpoints[i] + path, body, share, auth);
    if (!a.transport_ok) {
      reply.failure = a.failure;
      continue;
    }
    if (a.status == 200) {
      preferred_ = i;
      reply.kind = Reply::Kind::Ok;
      reply.body = std::move(a.body);
      return reply;
    }
    etcd::ErrorReply e;
    if (!etcd::decode_error(a.body, &e)) {
      reply.failure = options_.endpoints[i] + path + ": HTTP " + std::to_string(a.status);
      continue;
    }
    if (try_elsewhere(e.code)) {
      reply.failure = options_.endpoints[i] + ": " + e.message;
      continue;
    }
    if (auth && e.code == kUnauthenticated && !reauthenticated) {
      // The token expired (or this member does not know it): a new one, and the call again.
      token_.clear();
      reauthenticated = true;
      reply.failure = options_.endpoints[i] + ": " + e.message;
      --tried;
      continue;
    }
    preferred_ = i;
    reply.kind = Reply::Kind::Refused;
    reply.error = std::move(e);
    return reply;
  }
  if (reply.failure.empty()) reply.failure = "etcd: no time left to ask";
  reply.kind = Reply::Kind::Unreachable;
  return reply;
}

}  // namespace nasd::membership
