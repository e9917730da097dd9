// Bytes a block device has written, for "is it the disk?": the load generator reads the device
// holding the servers' stores at the start and the end of each measured interval, as it reads
// the server's CPU time (process_cpu.h). A server that writes what it acknowledges through to
// its disk at the disk's pace shows it here; one that keeps the data in memory does not.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace nasd::bench {

// Sectors written (field 10 of /proc/diskstats, always 512-byte units) of `device` ("vda",
// "sda1", "dm-0": the kernel's name, as in /proc/diskstats), in bytes. nullopt when no such
// device is listed or the file cannot be read.
std::optional<uint64_t> disk_bytes_written(const std::string& device);

// The same from the text of a /proc/diskstats file.
std::optional<uint64_t> parse_diskstats_bytes_written(const std::string& diskstats,
                                                      const std::string& device);

}  // namespace nasd::bench
