// The admin commands that show and reload the exports of a running node (Node::reload_exports),
// also run on SIGHUP by nasd_main.cc.
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>

#include "cluster/node.h"
#include "server/nfs/exports/exports.h"
#include "util/log.h"

namespace nasd::cluster {
namespace {

constexpr const char* kUsage = "usage: exports [list|reload]";

}  // namespace

std::vector<nfs::ExportPolicy> Node::with_namespace_root(std::vector<nfs::ExportPolicy> exports) {
  if (exports.empty()) return exports;
  for (const auto& e : exports)
    if (e.path == "/r") return exports;
  nfs::ExportPolicy r = exports.front();
  r.path = "/r";
  r.path_components = {"r"};
  r.volume_name = "r";
  r.volume_id = NamespaceRoot::kVolumeId;
  r.read_only = true;
  exports.push_back(std::move(r));
  return exports;
}

std::string Node::exports_command(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "list") {
    std::ostringstream out;
    for (const auto& e : exports_->all()) out << nfs::describe_export(e) << "\n";
    return out.str();
  }
  if (args.size() == 1 && args[0] == "reload") return reload_exports();
  throw std::invalid_argument(kUsage);
}

std::string Node::reload_exports() {
  std::lock_guard admin(admin_mu_);
  std::vector<nfs::ExportPolicy> next;
  try {
    // The same files a start reads: the config, then what `volume create` added.
    Config fresh = Config::load(plan_.config.origin());
    if (std::filesystem::exists(plan_.admin_volumes_file()))
      fresh.append(Config::load(plan_.admin_volumes_file()));
    next = nfs::Exports::parse(fresh);
    // A reload changes who may use which volume, never which volumes this node serves.
    std::map<std::string, uint32_t> served;
    for (const PlannedVolume& v : plan_.volumes) served[v.name] = v.id;
    for (const auto& e : next) {
      auto it = served.find(e.volume_name);
      if (it == served.end() || it->second != e.volume_id)
        throw ConfigError("[export " + e.path + "]: volume " + e.volume_name + " (id " +
                          std::to_string(e.volume_id) +
                          ") is not one this node serves; a new volume needs `nasd-admin "
                          "volume create` or a restart");
    }
    exports_->replace(with_namespace_root(std::move(next)));
  } catch (const std::exception& e) {
    std::string why = std::string("exports not reloaded, the exports in force are unchanged: ") + e.what();
    util::log("cluster").warn(why);
    throw std::invalid_argument(why);
  }
  auto now = exports_->all();
  util::log("cluster").info("exports reloaded from " + plan_.config.origin() + ": " + std::to_string(now.size()) +
           " export(s) in force");
  std::ostringstream out;
  out << "exports reloaded from " << plan_.config.origin() << "; in force now:\n";
  for (const auto& e : now) out << nfs::describe_export(e) << "\n";
  return out.str();
}

}  // namespace nasd::cluster
