// The user's flow with the real libnfs tools: a 100 MiB random file goes in with nfs-cp, shows
// up in nfs-ls with its size, and comes back out (nfs-cp and nfs-cat) bit for bit.
#include <openssl/evp.h>

#include <fstream>
#include <random>
#include <sstream>

#include "tests/e2e/e2e_fixture.h"

namespace nasd::e2e {
namespace {

using namespace std::chrono_literals;
constexpr uint64_t kSize = 100ull << 20;

std::string sha256_of(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return "missing " + p.string();
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    EVP_DigestUpdate(ctx, buf.data(), static_cast<size_t>(in.gcount()));
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, md, &len);
  EVP_MD_CTX_free(ctx);
  std::ostringstream hex;
  for (unsigned i = 0; i < len; ++i) hex << std::hex << (md[i] >> 4) << (md[i] & 15);
  return hex.str();
}

void write_random_file(const std::filesystem::path& p, uint64_t size) {
  std::mt19937_64 rng(20261202);
  std::ofstream out(p, std::ios::binary);
  std::vector<uint64_t> block(1 << 17);  // 1 MiB
  for (uint64_t done = 0; done < size; done += block.size() * 8) {
    for (auto& w : block) w = rng();
    out.write(reinterpret_cast<const char*>(block.data()),
              static_cast<std::streamsize>(std::min<uint64_t>(block.size() * 8, size - done)));
  }
}

// The size nfs-ls prints for `name` ("-rw-r--r--  1  0  0  104857600 name"), or -1.
int64_t listed_size(const std::string& listing, const std::string& name) {
  std::istringstream lines(listing);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (w.size() >= 2 && w.back() == name) return std::stoll(w[w.size() - 2]);
  }
  return -1;
}

class BigFileTest : public E2eTest {
 protected:
  CommandResult tool(const std::vector<std::string>& argv,
                     const std::optional<std::filesystem::path>& out = {}) {
    std::string bin = find_executable(argv[0]);
    if (bin.empty()) ADD_FAILURE() << argv[0] << " not installed (package libnfs-utils)";
    std::vector<std::string> full = argv;
    full[0] = bin.empty() ? argv[0] : bin;
    CommandResult r = run_command(full, 180s, scratch().path(), out);
    if (r.timed_out) r.output += "\n(" + argv[0] + " killed after 180 s)";
    return r;
  }
};

TEST_F(BigFileTest, HundredMegabytesRoundTripThroughTheLibnfsTools) {
  auto src = scratch() / "big.src";
  write_random_file(src, kSize);
  const std::string want = sha256_of(src);
  const std::string remote = url("/big.bin");

  CommandResult in = tool({"nfs-cp", src.string(), remote});
  ASSERT_EQ(in.exit_code, 0) << "nfs-cp in: " << in.output;

  CommandResult ls = tool({"nfs-ls", url()});
  ASSERT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_EQ(listed_size(ls.output, "big.bin"), static_cast<int64_t>(kSize)) << ls.output;
  EXPECT_EQ(attrs_of(nfs().resolve(root(), "big.bin")).size, kSize);

  auto copied = scratch() / "big.cp";
  CommandResult out = tool({"nfs-cp", remote, copied.string()});
  ASSERT_EQ(out.exit_code, 0) << "nfs-cp out: " << out.output;
  EXPECT_EQ(sha256_of(copied), want) << "nfs-cp brought back different bytes";
  std::filesystem::remove(copied);

  auto catted = scratch() / "big.cat";
  CommandResult cat = tool({"nfs-cat", remote}, catted);
  ASSERT_EQ(cat.exit_code, 0) << "nfs-cat: " << cat.output;
  EXPECT_EQ(std::filesystem::file_size(catted), kSize);
  EXPECT_EQ(sha256_of(catted), want) << "nfs-cat printed different bytes";
}

}  // namespace
}  // namespace nasd::e2e
