#include "server/nfs/exports/exports.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <optional>

namespace nasd::nfs {
namespace {

const std::vector<std::string> kExportKeys = {"volume", "clients", "access", "squash",
                                              "secure", "options", "anonuid", "anongid"};

std::string where(const ConfigSection& s) {
  return "line " + std::to_string(s.line()) + " [export " + s.name() + "]";
}

uint32_t get_id(const ConfigSection& s, const std::string& key, uint32_t dflt) {
  int64_t v = 0;
  try {
    v = s.get_int(key, dflt);
  } catch (const ConfigError& e) {
    throw ConfigError(where(s) + " " + key + ": " + e.what());
  }
  if (v < 0 || v > std::numeric_limits<uint32_t>::max())
    throw ConfigError(where(s) + " " + key + ": out of range");
  return static_cast<uint32_t>(v);
}

uint32_t volume_id_of(const Config& config, const ConfigSection& s, const std::string& name) {
  const ConfigSection* vol = config.section("volume", name);
  if (!vol) throw ConfigError(where(s) + ": no [volume " + name + "] section");
  if (!vol->has("id"))
    throw ConfigError("line " + std::to_string(vol->line()) + " [volume " + name + "]: missing id");
  return vol->get_u32("id", 0);
}

// One setting that may come from its own key and from a word of `options`: both must agree.
template <typename T>
void settle(const ConfigSection& s, const char* what, std::optional<T>* from_key, T from_option) {
  if (*from_key && **from_key != from_option)
    throw ConfigError(where(s) + ": options contradict the " + what + " key");
  *from_key = from_option;
}

ExportPolicy parse_export(const Config& config, const ConfigSection& s) {
  auto unknown = s.unknown_keys(kExportKeys);
  if (!unknown.empty()) throw ConfigError(where(s) + ": unknown key '" + unknown.front() + "'");

  ExportPolicy e;
  if (!split_export_path(s.name(), &e.path_components))
    throw ConfigError(where(s) + ": export path must be absolute and free of '..'");
  for (const auto& c : e.path_components) e.path += "/" + c;
  if (e.path.empty()) e.path = "/";
  e.export_id = export_id_for_path(e.path);

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

  std::optional<bool> read_only, secure;
  std::optional<Squash> squash;
  if (s.has("access")) {
    std::string access = s.get("access");
    if (access != "rw" && access != "ro")
      throw ConfigError(where(s) + " access: expected rw or ro, got '" + access + "'");
    read_only = access == "ro";
  }
  if (s.has("squash")) {
    std::string v = s.get("squash");
    if (v == "root") squash = Squash::Root;
    else if (v == "all") squash = Squash::All;
    else if (v == "none") squash = Squash::None;
    else throw ConfigError(where(s) + " squash: expected root, all or none, got '" + v + "'");
  }
  if (s.has("secure")) {
    try {
      secure = s.get_bool("secure", true);
    } catch (const ConfigError& err) {
      throw ConfigError(where(s) + " secure: " + err.what());
    }
  }
  for (const std::string& word : s.get_list("options")) {
    if (word == "rw") settle(s, "access", &read_only, false);
    else if (word == "ro") settle(s, "access", &read_only, true);
    else if (word == "secure") settle(s, "secure", &secure, true);
    else if (word == "insecure") settle(s, "secure", &secure, false);
    else if (word == "root_squash") settle(s, "squash", &squash, Squash::Root);
    else if (word == "no_root_squash") settle(s, "squash", &squash, Squash::None);
    else if (word == "all_squash") settle(s, "squash", &squash, Squash::All);
    else
      throw ConfigError(where(s) + " options: unknown option '" + word +
                        "' (rw, ro, secure, insecure, root_squash, no_root_squash, all_squash)");
  }
  e.read_only = read_only.value_or(true);
  e.squash = squash.value_or(Squash::Root);
  e.secure = secure.value_or(true);

  e.anon_uid = get_id(s, "anonuid", 65534);
  e.anon_gid = get_id(s, "anongid", 65534);
  return e;
}

// Strictness order for for_crossing(): lower is stricter.
int leniency(const ExportPolicy& e) {
  int squash = e.squash == Squash::All ? 0 : e.squash == Squash::Root ? 1 : 2;
  return (e.read_only ? 0 : 3) + squash;
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

std::shared_ptr<const Exports::Table> Exports::build(std::vector<ExportPolicy> exports) {
  auto table = std::make_shared<Table>();
  for (auto& e : exports) {
    e.export_id = export_id_for_path(e.path);
    for (const auto& other : table->exports) {
      if (other->path == e.path) throw ConfigError("[export " + e.path + "]: path exported twice");
      if (other->export_id == e.export_id)
        throw ConfigError("[export " + e.path + "]: its handle id collides with [export " +
                          other->path + "]; change one of the two paths");
    }
    table->exports.push_back(std::make_shared<const ExportPolicy>(std::move(e)));
  }
  return table;
}

Exports::Exports(std::vector<ExportPolicy> exports) : table_(build(std::move(exports))) {}

std::shared_ptr<const Exports::Table> Exports::snapshot() const {
  std::lock_guard lock(mu_);
  return table_;
}

void Exports::add(ExportPolicy policy) {
  std::lock_guard lock(mu_);  // held across the copy so two adds cannot lose one another
  std::vector<ExportPolicy> next;
  for (const auto& e : table_->exports) next.push_back(*e);
  next.push_back(std::move(policy));
  table_ = build(std::move(next));
}

void Exports::replace(std::vector<ExportPolicy> exports) {
  auto table = build(std::move(exports));
  std::lock_guard lock(mu_);
  table_ = std::move(table);
}

std::vector<ExportPolicy> Exports::all() const {
  std::vector<ExportPolicy> out;
  for (const auto& e : snapshot()->exports) out.push_back(*e);
  return out;
}

bool Exports::admits(const sockaddr_storage& peer) const {
  for (const auto& e : snapshot()->exports)
    if (e->allows(peer) && e->port_allowed(peer)) return true;
  return false;
}

std::vector<ExportPolicy> Exports::parse(const Config& config) {
  std::vector<ExportPolicy> exports;
  for (const ConfigSection* s : config.sections("export")) {
    ExportPolicy e = parse_export(config, *s);
    for (const auto& other : exports) {
      if (other.path == e.path) throw ConfigError(where(*s) + ": path exported twice");
      if (other.export_id == e.export_id)
        throw ConfigError(where(*s) + ": its handle id collides with [export " + other.path +
                          "]; change one of the two paths");
    }
    exports.push_back(std::move(e));
  }
  return exports;
}

std::shared_ptr<Exports> Exports::from_config(const Config& config) {
  return std::make_shared<Exports>(parse(config));
}

Exports::Policy Exports::for_handle(uint32_t volume_id, uint32_t export_id,
                                    const sockaddr_storage& peer) const {
  auto table = snapshot();
  if (export_id != 0) {
    for (const auto& e : table->exports)
      if (e->export_id == export_id) return e->volume_id == volume_id ? e : nullptr;
    return nullptr;
  }
  Policy first, listing;
  for (const auto& e : table->exports) {
    if (e->volume_id != volume_id) continue;
    if (!first) first = e;
    if (!e->allows(peer)) continue;
    if (listing) return nullptr;  // ambiguous: which rules the client mounted under is unknown
    listing = e;
  }
  return listing ? listing : first;
}

Exports::Policy Exports::for_path(const std::vector<std::string>& components,
                                  size_t* matched) const {
  auto table = snapshot();
  Policy best;
  for (const auto& e : table->exports) {
    const auto& ec = e->path_components;
    if (ec.size() > components.size()) continue;
    if (!std::equal(ec.begin(), ec.end(), components.begin())) continue;
    if (!best || ec.size() > best->path_components.size()) best = e;
  }
  if (best) *matched = best->path_components.size();
  return best;
}

Exports::Policy Exports::for_crossing(uint32_t volume_id, const std::string& crossed_path,
                                      const sockaddr_storage& peer) const {
  auto table = snapshot();
  Policy strictest;
  for (const auto& e : table->exports) {
    if (e->volume_id != volume_id || !e->allows(peer)) continue;
    if (e->path == crossed_path) return e;
    if (!strictest || leniency(*e) < leniency(*strictest)) strictest = e;
  }
  return strictest;
}

std::string describe_export(const ExportPolicy& e) {
  std::string clients;
  for (const auto& c : e.clients) clients += (clients.empty() ? "" : ",") + c.text();
  const char* squash = e.squash == Squash::None ? "no_root_squash"
                       : e.squash == Squash::All ? "all_squash"
                                                 : "root_squash";
  return e.path + " volume=" + e.volume_name + " clients=" + clients + " " +
         (e.read_only ? "ro" : "rw") + "," + (e.secure ? "secure" : "insecure") + "," + squash +
         " anonuid=" + std::to_string(e.anon_uid) + " anongid=" + std::to_string(e.anon_gid);
}

}  // namespace nasd::nfs
