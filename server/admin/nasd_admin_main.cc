// nasd-admin: sends one command to a running nasd's control socket and prints the reply.
//
//   nasd-admin --socket /path/nasd.sock stats
//   nasd-admin --config deploy/nasd.conf help
//
// Without --socket the path comes from the config's [node] data_dir and admin_socket.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "server/admin/admin_client.h"
#include "util/config.h"

namespace {

void usage(FILE* to) {
  std::fprintf(to,
               "usage: nasd-admin [--socket PATH | --config FILE] COMMAND [ARGS...]\n"
               "       nasd-admin --socket PATH help    lists the daemon's commands\n");
}

// data_dir is relative to the config file, admin_socket relative to data_dir.
std::string socket_from_config(const std::string& config_path) {
  nasd::Config config = nasd::Config::load(config_path);
  const nasd::ConfigSection* node = config.section("node");
  std::string data_dir = config.resolve_path(node ? node->get("data_dir", ".") : ".");
  std::string sock = node ? node->get("admin_socket", "nasd.sock") : "nasd.sock";
  return sock.starts_with("/") ? sock : data_dir + "/" + sock;
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket_path;
  std::string config_path;
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (words.empty() && (a == "--socket" || a == "--config") && i + 1 < argc) {
      (a == "--socket" ? socket_path : config_path) = argv[++i];
    } else if (words.empty() && (a == "-h" || a == "--help")) {
      usage(stdout);
      return 0;
    } else {
      words.push_back(a);
    }
  }
  if (words.empty()) {
    usage(stderr);
    return 2;
  }
  if (socket_path.empty()) {
    try {
      socket_path = socket_from_config(config_path.empty() ? "nasd.conf" : config_path);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "nasd-admin: %s (use --socket PATH)\n", e.what());
      return 2;
    }
  }
  // A planned move waits (at most a minute) until the new node serves what moved.
  const bool move = words.size() >= 2 && words[1] == "move";
  nasd::admin::AdminReply reply =
      nasd::admin::admin_call(socket_path, words, move ? 75000 : 10000);
  std::fputs(reply.text.c_str(), reply.ok ? stdout : stderr);
  return reply.ok ? 0 : 1;
}
