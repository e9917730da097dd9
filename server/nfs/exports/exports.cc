#include "server/nfs/exports/exports.h"

#include <algorithm>
#include <limits>
#include <mutex>

namespace nasd::nfs {
namespace {

const std::vector<std::string> kExportKeys = {"volume", "clients", "access",
                                              "squash", "anonuid", "anongid"};

std::string where(const ConfigSection& s) {
  return "line " + std::to_string(s.line()) + " [export " + s.name() + "]";
}

uint32_t get_id(const ConfigSection& s, const std::string& key, uint32_t dflt) {
  int64_t v = s.get_int(key, dflt);
  if (v < 0 || v > std::numeric_limits<uint32_t>::max())
    throw ConfigError(where(s) + " " + key + ": out of range");
  return static_cast<uint32_t>(v);
}

uint32_t volume_id_of(const Config& config, const ConfigSection& s, const std::string& name) {
  const ConfigSection* vol = config.section("volume", name);
  if (!vol) throw ConfigError(where(s) + ": no [volume " + name + "] section");
  if (!vol->has("id")) throw ConfigError("[volume " + name + "]: missing id");
  return vol->get_u32("id", 0);
}

ExportPolicy parse_export(const Config& config, const ConfigSection& s) {
  auto unknown = s.unknown_keys(kExportKeys);
  if (!unknown.empty()) throw ConfigError(where(s) + ": unknown key '" + unknown.front() + "'");

  ExportPolicy e;
  if (!split_export_path(s.name(), &e.path_components))
    throw ConfigError(where(s) + ": export path must be absolute and free of '..'");
  for (const auto& c : e.path_components) e.path += "/" + c;
  if (e.path.empty()) e.path = "/";

  e.volume_name = s.get("volume");
  if (e.volume_name.empty()) throw ConfigError(where(s) + ": missing volume");
  e.volume_id = volume_id_of(config, s, e.volume_name);

  auto clients = s.get_list("clients");
  if (clients.empty()) throw ConfigError(where(s) + ": missing clients (use * for everyone)");
  for (const auto& c : clients) {
    try {
      e.clients.push_back(ClientSpec::parse(c));
    } catch (const ConfigError& err) {
      throw ConfigError(where(s) + ": " + err.what());
    }
  }

  std::string access = s.get("access", "ro");
  if (access != "rw" && access != "ro")
    throw ConfigError(where(s) + " access: expected rw or ro, got '" + access + "'");
  e.read_only = access == "ro";

  std::string squash = s.get("squash", "root");
  if (squash == "root") e.squash = Squash::Root;
  else if (squash == "all") e.squash = Squash::All;
  else if (squash == "none") e.squash = Squash::None;
  else throw ConfigError(where(s) + " squash: expected root, all or none, got '" + squash + "'");

  e.anon_uid = get_id(s, "anonuid", 65534);
  e.anon_gid = get_id(s, "anongid", 65534);
  return e;
}

}  // namespace

bool split_export_path(std::string_view path, std::vector<std::string>* components) {
  components->clear();
  if (path.empty() || path.front() != '/') return false;
  size_t pos = 0;
  while (pos < path.size()) {
    size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(pos, end - pos);
    if (part == "..") return false;
    if (!part.empty() && part != ".") components->emplace_back(part);
    pos = end + 1;
  }
  return true;
}

Exports::Exports(std::vector<ExportPolicy> exports) : exports_(exports.begin(), exports.end()) {}

void Exports::add(ExportPolicy policy) {
  std::unique_lock lock(mu_);
  for (const auto& e : exports_)
    if (e.path == policy.path) throw ConfigError("[export " + policy.path + "]: path exported twice");
  exports_.push_back(std::move(policy));
}

std::deque<ExportPolicy> Exports::snapshot_deque() const {
  std::shared_lock lock(mu_);
  return exports_;
}

std::vector<ExportPolicy> Exports::all() const {
  std::shared_lock lock(mu_);
  return {exports_.begin(), exports_.end()};
}

std::shared_ptr<Exports> Exports::from_config(const Config& config) {
  std::vector<ExportPolicy> exports;
  for (const ConfigSection* s : config.sections("export")) {
    ExportPolicy e = parse_export(config, *s);
    for (const auto& other : exports)
      if (other.path == e.path) throw ConfigError(where(*s) + ": path exported twice");
    exports.push_back(std::move(e));
  }
  return std::make_shared<Exports>(std::move(exports));
}

const ExportPolicy* Exports::for_volume(uint32_t volume_id, const sockaddr_storage& peer) const {
  std::shared_lock lock(mu_);
  for (const auto& e : exports_)
    if (e.volume_id == volume_id && e.allows(peer)) return &e;
  return nullptr;
}

const ExportPolicy* Exports::for_path(const std::vector<std::string>& components,
                                      size_t* matched) const {
  std::shared_lock lock(mu_);
  const ExportPolicy* best = nullptr;
  for (const auto& e : exports_) {
    const auto& ec = e.path_components;
    if (ec.size() > components.size()) continue;
    if (!std::equal(ec.begin(), ec.end(), components.begin())) continue;
    if (!best || ec.size() > best->path_components.size()) best = &e;
  }
  if (best) *matched = best->path_components.size();
  return best;
}

}  // namespace nasd::nfs
