// The CPU time a process on this machine has used, for "server CPU per operation": the load
// generator reads the server's counters at the start and the end of each measured interval, so
// the server's start-up, the fileset build and the warmups are not charged to the operations.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace nasd::bench {

// User + system time of process `pid`, all its threads together, those that have exited
// included (fields 14 and 15 of /proc/PID/stat, in clock ticks: 10 ms on most kernels, so a
// window of a few seconds is needed for a figure good to 1%). nullopt when the process is gone
// or /proc cannot be read.
std::optional<double> process_cpu_seconds(pid_t pid);

// The same from the text of a /proc/PID/stat file (the command name may hold spaces and ')').
std::optional<double> parse_proc_stat_cpu_seconds(const std::string& stat, long ticks_per_second);

}  // namespace nasd::bench
