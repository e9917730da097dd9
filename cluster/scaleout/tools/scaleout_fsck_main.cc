// nasd-fsck --scaleout (also run directly as nasd-fsck-scaleout): checks a scale-out volume
// offline, read-only. Every group of the catalog dump (catalog_text.h) is read from the nodes'
// drives, every unit's checksum checked and every parity unit re-encoded and compared.
//   nasd-fsck --scaleout CATALOG --volume-id ID --drives N NODE=DIR [NODE=DIR ...]
// Exit status: 0 clean, 1 problems found, 2 usage or open error.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cluster/scaleout/catalog_text.h"
#include "cluster/scaleout/scaleout_fsck.h"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: nasd-fsck --scaleout CATALOG --volume-id ID --drives N NODE=DIR "
               "[NODE=DIR ...]\n");
  return 2;
}

bool to_u64(const std::string& s, uint64_t max, uint64_t* out) {
  if (s.empty() || s.size() > 20 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  try {
    *out = std::stoull(s);
  } catch (...) {
    return false;
  }
  return *out <= max;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace nasd::scaleout;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "--scaleout") args.erase(args.begin());
  std::string catalog_path;
  uint64_t volume = 0, drives = 0;
  bool have_volume = false;
  std::vector<std::pair<uint32_t, std::string>> nodes;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if ((a == "--volume-id" || a == "--drives") && i + 1 < args.size()) {
      const bool ok = a == "--volume-id" ? (have_volume = to_u64(args[++i], UINT64_MAX, &volume))
                                         : to_u64(args[++i], 63, &drives) && drives > 0;
      if (!ok) return usage();
    } else if (catalog_path.empty() && a.find('=') == std::string::npos && a[0] != '-') {
      catalog_path = a;
    } else if (a.find('=') != std::string::npos && a[0] != '-') {
      uint64_t id = 0;
      if (!to_u64(a.substr(0, a.find('=')), UINT32_MAX, &id)) return usage();
      nodes.push_back({static_cast<uint32_t>(id), a.substr(a.find('=') + 1)});
    } else {
      return usage();
    }
  }
  if (catalog_path.empty() || !have_volume || drives == 0 || nodes.empty()) return usage();

  std::ifstream in(catalog_path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "nasd-fsck: cannot read %s\n", catalog_path.c_str());
    return 2;
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::vector<GroupRecord> catalog;
  std::string error;
  if (!decode_catalog(text.str(), &catalog, &error)) {
    std::fprintf(stderr, "nasd-fsck: %s: %s\n", catalog_path.c_str(), error.c_str());
    return 2;
  }
  LocalUnits units;
  std::vector<std::unique_ptr<NodeUnits>> open;
  for (const auto& [id, dir] : nodes) {
    // Read-only: a node folder that is not there is an error, never created.
    if (!std::filesystem::is_directory(dir)) {
      std::fprintf(stderr, "nasd-fsck: node %u: no folder %s\n", id, dir.c_str());
      return 2;
    }
    std::unique_ptr<NodeUnits> n;
    if (!NodeUnits::open(dir, volume, id, static_cast<uint32_t>(drives), &n, &error)) {
      std::fprintf(stderr, "nasd-fsck: node %u (%s): %s\n", id, dir.c_str(), error.c_str());
      return 2;
    }
    units.add(n.get());
    open.push_back(std::move(n));
  }
  GroupIo io(&units);
  const FsckReport r = fsck_groups(io, catalog);
  std::printf("%s%s: %s\n", format_fsck_report(r).c_str(), catalog_path.c_str(),
              r.clean() ? "clean" : "problems found");
  return r.clean() ? 0 : 1;
}
