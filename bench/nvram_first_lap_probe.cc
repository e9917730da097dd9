// What the first lap through a freshly mapped NVRAM region costs on this machine, by how the
// region is prepared at open (issue 12; nvram/region.cc, prepare_for_stores):
//   populate        mmap(MAP_SHARED | MAP_POPULATE): the kernel maps a shared file's pages
//                   read-only, so every first store takes a write-protect fault;
//   populate_write  madvise(MADV_POPULATE_WRITE): mapped writable and dirty;
//   touch           populate_write and one store per page of the byte it holds (what nasd does).
// For each: the time to open, then 1 MiB copies through the whole region twice (lap 0, lap 1),
// in microseconds per MiB. Not project code: a stand-alone probe, built by the .sh beside it.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

void probe(const std::string& path, const std::string& mode, size_t region_bytes) {
  unlink(path.c_str());
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 || posix_fallocate(fd, 0, off_t(region_bytes)) != 0) {
    perror(path.c_str());
    std::exit(1);
  }
  fsync(fd);
  const auto t0 = Clock::now();
  const int flags = MAP_SHARED | (mode == "populate" ? MAP_POPULATE : 0);
  auto* base = static_cast<uint8_t*>(
      mmap(nullptr, region_bytes, PROT_READ | PROT_WRITE, flags, fd, 0));
  if (base == MAP_FAILED) {
    perror("mmap");
    std::exit(1);
  }
  if (mode != "populate" && madvise(base, region_bytes, MADV_POPULATE_WRITE) != 0)
    perror("madvise(MADV_POPULATE_WRITE)");
  if (mode == "touch") {
    for (size_t off = 0; off < region_bytes; off += 4096) {
      volatile uint8_t* p = base + off;
      *p = *p;
    }
  }
  const double open_ms = ms_since(t0);
  std::vector<uint8_t> record(1 << 20, 0x5a);
  double lap_us[2];
  for (int lap = 0; lap < 2; ++lap) {
    const auto t = Clock::now();
    for (size_t off = 0; off + record.size() <= region_bytes; off += record.size())
      std::memcpy(base + off, record.data(), record.size());
    lap_us[lap] = ms_since(t) * 1000.0 / double(region_bytes >> 20);
  }
  std::printf("%-15s open %7.1f ms   lap 0 %7.1f us/MiB   lap 1 %7.1f us/MiB\n", mode.c_str(),
              open_ms, lap_us[0], lap_us[1]);
  munmap(base, region_bytes);
  close(fd);
  unlink(path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [MiB=256]\n", argv[0]);
    return 2;
  }
  const std::string path = std::string(argv[1]) + "/region.img";
  const size_t mib = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 256;
  for (const char* mode : {"populate", "populate_write", "touch"}) probe(path, mode, mib << 20);
  return 0;
}
