// The admin command that creates a volume on a running node (see Node::create_volume).
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "cluster/node.h"
#include "server/nfs/exports/exports.h"

namespace nasd::cluster {
namespace {

constexpr const char* kUsage =
    "usage: volume create NAME SIZE [--id N] [--clients LIST] [--access rw|ro] "
    "[--squash root|all|none] | volume move VOLUME EVS [--wait SECONDS | --no-wait] | "
    "volume cancel-move VOLUME";

bool valid_volume_name(const std::string& name) {
  if (name.empty() || name.size() > 32) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  return true;
}

// Appends `text` to `path` and makes it durable before the command reports success.
void append_durably(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fsync(fd) == 0;
  int saved = errno;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot write " + path + ": " + std::strerror(saved));
}

}  // namespace

std::string Node::volume_command(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "create") return create_volume(args);
  if (!args.empty() && (args[0] == "move" || args[0] == "cancel-move"))
    return deployment_->move("volume", args);
  if (args.empty() || args[0] == "list") return hosted_->status();
  throw std::invalid_argument(kUsage);
}

std::string Node::create_volume(const std::vector<std::string>& args) {
  if (args.size() < 3) throw std::invalid_argument(kUsage);
  const std::string& name = args[1];
  if (!valid_volume_name(name))
    throw std::invalid_argument("volume name must be 1-32 letters, digits, '-' or '_'");
  uint64_t size = parse_size(args[2]);

  // Defaults for the new export come from the node's first export in force (after any
  // reload), so a volume made by the admin is reachable by the same clients under the same
  // squashing and port rules.
  std::string clients = "127.0.0.0/8", access = "rw", squash = "root", secure = "yes";
  for (const auto& e : exports_->all()) {
    if (e.volume_id == NamespaceRoot::kVolumeId) continue;
    clients.clear();
    for (const auto& c : e.clients) clients += (clients.empty() ? "" : ", ") + c.text();
    squash = e.squash == nfs::Squash::None ? "none" : e.squash == nfs::Squash::All ? "all" : "root";
    secure = e.secure ? "yes" : "no";
    break;
  }
  std::optional<uint32_t> id;
  for (size_t i = 3; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) throw std::invalid_argument(kUsage);
    const std::string &key = args[i], &value = args[i + 1];
    if (key == "--id") id = static_cast<uint32_t>(std::stoul(value));
    else if (key == "--clients") clients = value;
    else if (key == "--access") access = value;
    else if (key == "--squash") squash = value;
    else throw std::invalid_argument(kUsage);
  }

  if (std::string why = deployment_->why_no_volume_create(); !why.empty())
    throw std::invalid_argument(why);
  std::lock_guard admin(admin_mu_);
  if (plan_.volume(name)) throw std::invalid_argument("volume " + name + " exists");
  if (!id) id = plan_.next_free_id();
  if (deployment_->resolver()->find(*id)) throw std::invalid_argument("volume id " + std::to_string(*id) + " is in use");

  std::ostringstream text;
  text << "\n# created by `nasd-admin volume create`\n"
       << "[volume " << name << "]\nid = " << *id << "\nbacking = " << name << ".lfs\nsize = " << size
       << "\n\n[export /r/" << name << "]\nvolume = " << name << "\nclients = " << clients
       << "\naccess = " << access << "\nsquash = " << squash << "\nsecure = " << secure << "\n";
  // Parse and check everything against the node's config before touching any disk.
  Config added = Config::parse(text.str(), plan_.admin_volumes_file());
  NodePlan grown = plan_;
  grown.add_volumes(added);
  const Config& merged = grown.config;
  auto all_exports = nfs::Exports::from_config(merged);
  std::optional<nfs::ExportPolicy> policy;
  for (const auto& e : all_exports->all())
    if (e.path == "/r/" + name) policy = e;

  deployment_->serve_local(hosted_->open(*added.section("volume", name), merged, plan_.node.data_dir));
  exports_->add(*policy);
  namespace_root_->add_entry(name, *id);
  append_durably(plan_.admin_volumes_file(), text.str());
  plan_ = std::move(grown);
  return "volume " + name + " (id " + std::to_string(*id) + ", " + args[2] + ") created and exported as /r/" +
         name + "\n";
}

}  // namespace nasd::cluster
