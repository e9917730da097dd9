// Writes the seeds of bench_agent_protocol_fuzzer: every message of a whole coordinator/agent
// session, alone (path 0) and as one stream of frames (path 1), plus hostile ones (path 2).
//   make_agent_fuzz_seeds tests/fuzz/bench/seeds
#include <fstream>
#include <string>
#include <vector>

#include "bench/agent_protocol.h"

using namespace nasd::bench;
using namespace nasd::bench::agent;

namespace {

void save(const std::string& path, uint8_t path_byte, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.put(static_cast<char>(path_byte));
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void chunk(std::vector<uint8_t>* stream, const std::vector<uint8_t>& m) {
  stream->push_back(static_cast<uint8_t>(m.size()));
  stream->push_back(static_cast<uint8_t>(m.size() >> 8));
  stream->insert(stream->end(), m.begin(), m.end());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string dir = argv[1];
  Prepare p;
  p.agent_index = 0;
  p.agents = 2;
  p.targets = {"nfs://10.77.0.1/r/v0?nfsport=2049&mountport=20048"};
  p.workdir = "loadgen-1.lg1";
  p.mix_name = "SFS2014 VDA";
  p.mix_percent[index_of(OpType::kRead)] = 45;
  p.mix_percent[index_of(OpType::kWrite)] = 45;
  p.mix_percent[index_of(OpType::kCommit)] = 10;
  p.file_sizes = {{1 << 20, 50}, {1 << 28, 50}};
  StepDone d;
  d.index = 0;
  d.first_issue_ns = 5;
  for (int i = 0; i < 40; ++i) d.stats.record_reply(OpType::kRead, 1000000 + i * 50000, 0, 65536);
  d.stats.record_reply(OpType::kWrite, 0, 28);
  std::vector<std::pair<std::string, std::vector<uint8_t>>> messages = {
      {"prepare", encode(p)},
      {"prepared", encode(Prepared{{ServerFacts{1 << 20, 1 << 20, 0, 0, 1 << 30, 1 << 29, 1000, 900}}, 12345})},
      {"build", encode_build()},
      {"built", encode(Built{12345, 1.5})},
      {"clock_probe", encode(ClockProbe{7})},
      {"clock_reply", encode(ClockReply{7, 123456789})},
      {"step", encode(Step{0, 1000000000, 500000000, 3000000000, 20})},
      {"step_done", encode(d)},
      {"finish", encode(Finish{true})},
      {"finished", encode(Finished{""})},
      {"error", encode(Error{"Step 3 out of order"})},
  };
  std::vector<uint8_t> stream;
  for (const auto& [name, bytes] : messages) {
    save(dir + "/message_" + name, 0, bytes);
    chunk(&stream, bytes.size() < 65536 ? bytes : std::vector<uint8_t>(bytes.begin(), bytes.begin() + 65535));
  }
  save(dir + "/sealed_session", 1, stream);
  // Hostile: a frame claiming 2 GiB, a short frame with a made-up tag, a Prepare whose target
  // count is huge.
  save(dir + "/raw_huge_length", 2, {0xff, 0xff, 0xff, 0x7f, 1, 2, 3});
  std::vector<uint8_t> forged = {4, 0, 0, 0, 5, 0, 0, 0};
  forged.resize(forged.size() + 32, 0xaa);
  save(dir + "/raw_forged_tag", 2, forged);
  std::vector<uint8_t> many = {static_cast<uint8_t>(MessageType::kPrepare), 0, 0, 0, 0, 2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
  save(dir + "/message_prepare_many_targets", 0, many);
  return 0;
}
