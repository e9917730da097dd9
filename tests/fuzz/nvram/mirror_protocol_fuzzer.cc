// libFuzzer target: what a primary can send to the NVRAM mirror once its connection is
// authenticated -- the last line of defence if a key holder misbehaves or a bug sends nonsense.
// The input is the byte stream: FrameReader splits it (through a socket, as the server reads
// it) and every frame goes through MirrorServer::on_frame against a fresh, small region, so
// hellos of any size and identity, records at any position and length, and trims land on the
// real bounds checks. The first byte chooses whether frames must carry tags (then every
// made-up tag must be refused).
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "nvram/mirror_protocol.h"
#include "nvram/mirror_server.h"
#include "tests/fuzz/socket_feed.h"

namespace {

using namespace nasd;

std::string region_path() {
  static const std::string path = "/tmp/nasd-mirror-fuzz-" + std::to_string(::getpid()) + ".img";
  // The last input's region goes when the fuzzer exits: a run leaves nothing in /tmp.
  static const bool cleaned_at_exit = std::atexit([] { ::unlink(region_path().c_str()); }) == 0;
  (void)cleaned_at_exit;
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const bool sealed = data[0] & 1;
  ::unlink(region_path().c_str());
  nvram::MirrorServerOptions options;
  options.credentials = {std::vector<uint8_t>(32, 0x5a), "b"};
  options.max_log_size = 1 << 20;  // hellos above this are refused before a file is made
  nvram::MirrorServer server(region_path(), nvram::DurabilityMode::Process, options);

  const int fd = fuzz::socket_holding({data + 1, size - 1});
  if (fd < 0) return 0;

  nvram::wire::FrameReader reader;
  if (sealed) reader.require_tags(link::FrameOpener(link::DirectionKey{7}));
  bool greeted = false;
  for (int round = 0; round < 1000 && reader.fill(fd); ++round) {
    nvram::wire::Frame frame;
    nvram::wire::FrameReader::Next n;
    bool ended = false;
    while ((n = reader.next(&frame)) == nvram::wire::FrameReader::Next::Frame) {
      if (sealed) __builtin_trap();  // a tag the input made up was accepted
      bool got_records = false;
      std::vector<uint8_t> reply;
      if (!server.on_frame(frame, &greeted, &got_records, &reply).empty()) {
        ended = true;  // the server drops the connection here
        break;
      }
    }
    if (ended || n == nvram::wire::FrameReader::Next::Bad) break;
  }
  ::close(fd);
  return 0;
}
