#include "tests/nvram/test_util.h"

#include <cstdlib>
#include <stdexcept>

namespace nasd::nvram::testing {

test_support::MemoryFsOptions mem_target_options(std::string persist_path) {
  test_support::MemoryFsOptions o;
  o.root_mode = 0777;
  o.persist_path = std::move(persist_path);
  return o;
}

ScratchDir::ScratchDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base ? base : "/tmp") + "/nasd-nvram-test-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

JournalOptions small_options(const std::string& region_path, uint64_t size, DurabilityMode mode) {
  JournalOptions o;
  o.path = region_path;
  o.size = size;
  o.mode = mode;
  o.flush_threshold_pct = 95;
  o.flush_interval = std::chrono::hours(1);
  o.space_wait = std::chrono::seconds(20);
  return o;
}

JournalOptions churning_options(const std::string& region_path) {
  JournalOptions o = small_options(region_path, kRegionHeaderSize + (256 << 10));
  o.flush_threshold_pct = 50;
  o.flush_interval = std::chrono::milliseconds(20);
  o.space_wait = std::chrono::seconds(3);
  return o;
}

std::vector<uint8_t> pattern(uint64_t seed, size_t n) {
  std::vector<uint8_t> v(n);
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v[i] = static_cast<uint8_t>(x);
  }
  return v;
}

}  // namespace nasd::nvram::testing

#include "nvram/crc32c.h"

namespace nasd::nvram::testing {

namespace {

void walk(fs::Volume& v, fs::InodeId dir, const std::string& path, std::string* out) {
  fs::OpContext ctx;
  ctx.cred.uid = 0;
  ctx.cred.gid = 0;
  uint64_t cookie = 0;
  for (int rounds = 0; rounds < 100000; ++rounds) {
    fs::ReaddirResult rd;
    if (v.readdir(ctx, dir, cookie, 0, 64, false, &rd) != fs::Status::Ok) {
      *out += path + ": readdir failed\n";
      return;
    }
    for (const auto& e : rd.entries) {
      cookie = e.cookie;
      if (e.name == "." || e.name == "..") continue;
      fs::Attr a;
      const std::string p = path + "/" + e.name;
      if (v.getattr(ctx, e.id, &a) != fs::Status::Ok) {
        *out += p + ": getattr failed\n";
        continue;
      }
      *out += p + " ino=" + std::to_string(e.id.ino) + "/" + std::to_string(e.id.gen) +
              " type=" + std::to_string(static_cast<int>(a.type)) +
              " mode=" + std::to_string(a.mode) + " nlink=" + std::to_string(a.nlink) +
              " uid=" + std::to_string(a.uid) + " size=" + std::to_string(a.size);
      if (a.type == fs::FileType::Reg) {
        std::vector<uint8_t> data;
        bool eof = false;
        std::optional<fs::Attr> ra;
        v.read(ctx, e.id, 0, static_cast<uint32_t>(a.size), &data, &eof, &ra);
        *out += " crc=" + std::to_string(crc32c(data.data(), data.size()));
      } else if (a.type == fs::FileType::Lnk) {
        std::string target;
        std::optional<fs::Attr> la;
        v.readlink(ctx, e.id, &target, &la);
        *out += " -> " + target;
      }
      *out += "\n";
      if (a.type == fs::FileType::Dir) walk(v, e.id, p, out);
    }
    if (rd.eof) return;
  }
}

}  // namespace

std::string tree_snapshot(fs::Volume& volume) {
  std::string out;
  walk(volume, volume.root(), "", &out);
  return out;
}

}  // namespace nasd::nvram::testing
