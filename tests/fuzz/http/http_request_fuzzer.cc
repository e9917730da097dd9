// libFuzzer target: arbitrary requests through the management listener's request handling
// (ManagementServer::handle, what civetweb hands every connection to) and the password file
// parser. The input is split at '\n' into method, path, Host, Authorization, Cookie,
// X-Requested-With, X-CSRF-Token and body, so every field (form bodies, cookies, tokens, the
// Host allowlist, bearer tokens) sees hostile bytes. A password file and a scrape token file
// exist, so logins run the whole hash comparison and tokens the file read and comparison;
// actions reach a fake `failover` command.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "server/http/management_server.h"
#include "server/http/host_check.h"
#include "server/http/password.h"
#include "server/http/scrape_token.h"

namespace {

// Removes the fuzzer's password file when the process ends.
struct TempFile {
  std::string path;
  ~TempFile() { ::unlink(path.c_str()); }
};

nasd::http::ManagementServer& server() {
  static nasd::admin::CommandRegistry commands;
  static TempFile password_file{"/tmp/nasd-http-fuzz-" + std::to_string(::getpid()) + ".passwd"};
  static TempFile token_file{"/tmp/nasd-http-fuzz-" + std::to_string(::getpid()) + ".token"};
  static nasd::http::ManagementServer* s = [] {
    commands.add_command("failover", "", [](const std::vector<std::string>&) { return "ok"; });
    commands.add_command("volumes", "", [](const std::vector<std::string>&) { return "v0"; });
    const std::string& file = password_file.path;
    nasd::http::store_password_file(file, nasd::http::PasswordHash::make("admin", "fuzz-password", 1));
    nasd::http::store_new_token_file(token_file.path);
    nasd::http::ManagementWiring w;
    w.options.port = 0;
    w.options.password_file = file;
    w.options.token_file = token_file.path;
    w.options.hosts = {"nas1.example.com"};
    w.node_name = "fuzz";
    w.commands = &commands;
    w.stats = std::make_shared<nasd::rpc::CallStats>();
    w.stats->add_program(100003, 3, "nfs", {"NULL", "GETATTR"});
    return new nasd::http::ManagementServer(std::move(w));
  }();
  return *s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  nasd::http::ManagementServer::Request r;
  std::string* fields[] = {&r.method,        &r.path,           &r.host,       &r.authorization,
                           &r.cookie_header, &r.requested_with, &r.csrf_header};
  for (std::string* f : fields) {
    size_t nl = in.find('\n');
    *f = std::string(in.substr(0, nl));
    in = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
  }
  r.body = std::string(in.substr(0, nasd::http::ManagementServer::kMaxBody));
  r.client = "127.0.0.1";
  auto reply = server().handle(r);
  if (reply.status < 200 || reply.status > 599) __builtin_trap();
  const std::string whole(reinterpret_cast<const char*>(data), size);
  nasd::http::PasswordHash::parse(whole);
  nasd::http::host_allowed(whole, {"nas1.example.com"});
  if (auto t = nasd::http::bearer_token(whole); t && t->empty()) __builtin_trap();
  return 0;
}
