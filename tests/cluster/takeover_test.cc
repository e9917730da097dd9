// The takeover path of an HA pair without processes: node a's journal mirrors to b's
// PartnerMirror; a "crashes" (nothing closed, nothing flushed); b opens a's volume from the
// shared folder with a copy of the mirror and finds every acknowledged operation.
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cluster/hosted_volumes.h"
#include "cluster/partner_mirror.h"
#include "nvram/journal.h"
#include "util/config.h"

namespace nasd::cluster {
namespace {

struct Scratch {
  std::string path;
  Scratch() {
    char tmpl[] = "/tmp/nasd-takeover-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~Scratch() { std::filesystem::remove_all(path); }
};

std::vector<uint8_t> pattern(uint32_t seed, size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed * 131 + i * 7);
  return v;
}

fs::OpContext root_ctx() {
  fs::OpContext ctx;
  ctx.cred.uid = 0;
  ctx.cred.gid = 0;
  return ctx;
}

const Config kConfig = Config::parse("[volume v0]\nid = 7\nsize = 64M\nsegment_size = 1M\n");

struct Logged {
  std::vector<std::string> lines;
  HostedVolumes::Log log() {
    return [this](const std::string& l) { lines.push_back(l); };
  }
  bool has(const std::string& what) const {
    for (const auto& l : lines)
      if (l.find(what) != std::string::npos) return true;
    return false;
  }
};

TEST(Takeover, EveryAcknowledgedOperationOfTheDeadPartnerIsReplayedFromTheMirrorCopy) {
  Scratch dir;
  const std::string shared = dir.path + "/san";
  std::filesystem::create_directories(shared);
  PartnerMirror mirror(dir.path + "/b-partner-nvram.img", nvram::DurabilityMode::Process,
                       "127.0.0.1", 0);
  mirror.start();

  constexpr int kFiles = 40;
  {
    nvram::JournalOptions jo;
    jo.path = dir.path + "/a-nvram.img";
    jo.size = 16 << 20;
    jo.mirror = "127.0.0.1:" + std::to_string(mirror.port());
    jo.mirror_policy = nvram::MirrorPolicy::Fail;  // acknowledged = in the mirror too
    auto journal = nvram::Journal::open(jo);
    for (int i = 0; i < 200 && !journal->accepts_mutations(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(journal->accepts_mutations()) << "the mirror never connected";
    Logged a_log;
    HostedVolumes a(journal, a_log.log());
    std::shared_ptr<fs::Volume> v = a.open(*kConfig.section("volume", "v0"), kConfig, shared);
    fs::OpContext ctx = root_ctx();
    for (int i = 0; i < kFiles; ++i) {
      fs::InodeId f;
      std::optional<fs::Attr> attr;
      fs::Wcc wcc;
      ASSERT_EQ(v->create(ctx, v->root(), "f" + std::to_string(i), fs::CreateMode::Guarded, {}, 0,
                          &f, &attr, &wcc),
                fs::Status::Ok);
      fs::Stability got;
      auto data = pattern(i, 6000);
      ASSERT_EQ(v->write(ctx, f, 0, data, fs::Stability::FileSync, &got, &wcc), fs::Status::Ok);
    }
    // a dies here: HostedVolumes abandons (writes nothing), the journal is dropped unflushed.
  }

  const std::string copy = dir.path + "/takeover.img";
  std::string error;
  ASSERT_TRUE(mirror.copy_to(copy, &error)) << error;
  Logged b_log;
  HostedVolumes b(nullptr, b_log.log());
  std::shared_ptr<fs::Volume> v = b.open(*kConfig.section("volume", "v0"), kConfig, shared, copy);
  EXPECT_TRUE(b_log.has("partner's NVRAM")) << "no replay was reported";
  EXPECT_FALSE(b_log.has("replayed 0 of")) << "nothing needed replaying: the test proves nothing";
  fs::OpContext ctx = root_ctx();
  for (int i = 0; i < kFiles; ++i) {
    fs::InodeId f;
    std::optional<fs::Attr> oa, da;
    ASSERT_EQ(v->lookup(ctx, v->root(), "f" + std::to_string(i), &f, &oa, &da), fs::Status::Ok)
        << "f" << i << " was acknowledged but is missing";
    std::vector<uint8_t> data;
    bool eof = false;
    ASSERT_EQ(v->read(ctx, f, 0, 8192, &data, &eof, &oa), fs::Status::Ok);
    EXPECT_EQ(data, pattern(i, 6000)) << "f" << i;
  }
  b.close(7, true);
  // The mirror keeps serving its partner after the copy.
  EXPECT_NE(mirror.status().find("holds records"), std::string::npos) << mirror.status();
}

}  // namespace
}  // namespace nasd::cluster
