#include "cluster/serving_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "util/log.h"

namespace nasd::cluster {
namespace {

std::string ms_or_dash(int64_t ms) { return ms > 0 ? std::to_string(ms) : "-"; }

}  // namespace

int64_t ServingLog::now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::unique_ptr<ServingLog> ServingLog::open(const std::string& path, std::string* error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = path + ": " + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<ServingLog> log(new ServingLog(fd, path));
  log->append(std::to_string(now_ms()) + " boot " + std::to_string(::getpid()));
  return log;
}

ServingLog::~ServingLog() { ::close(fd_); }

void ServingLog::started(const std::string& volume, uint64_t epoch) {
  append(std::to_string(now_ms()) + " start " + volume + " " + std::to_string(epoch));
}

void ServingLog::ready(const std::string& volume, uint64_t epoch) {
  append(std::to_string(now_ms()) + " ready " + volume + " " + std::to_string(epoch));
}

void ServingLog::stopped(const std::string& volume, uint64_t epoch, int64_t trusted_until_ms,
                         int64_t last_served_ms) {
  append(std::to_string(now_ms()) + " stop " + volume + " " + std::to_string(epoch) +
         " trusted_until=" + ms_or_dash(trusted_until_ms) +
         " last_served=" + ms_or_dash(last_served_ms));
}

// One write(2) per line (O_APPEND: whole lines, in order), then fdatasync: a line is on disk
// before the node acts on what it says (a start before the open, a stop before the release).
void ServingLog::append(const std::string& line) {
  const std::string text = line + "\n";
  std::lock_guard lock(mu_);
  const bool ok = ::write(fd_, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fdatasync(fd_) == 0;
  if (!ok && !warned_) {
    warned_ = true;
    util::log("cluster").warn("serving log " + path_ + ": " + std::strerror(errno) +
                              " (the fault drill cannot check this node's serving intervals)");
  }
}

void ServedBounds::trusted_until(std::chrono::steady_clock::time_point until) {
  if (until == std::chrono::steady_clock::time_point{}) return;
  const int64_t until_ms =
      ServingLog::now_ms() +
      std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now())
          .count();
  int64_t seen = trusted_until_ms.load();
  while (seen < until_ms && !trusted_until_ms.compare_exchange_weak(seen, until_ms)) {
  }
}

void ServedBounds::write_start(ServingLog* log, const std::string& volume, uint64_t lease_epoch) {
  last_served_ms.store(0);
  epoch = lease_epoch;
  if (log) log->started(volume, epoch);
}

void ServedBounds::write_stop(ServingLog* log, const std::string& volume) {
  const int64_t trusted = trusted_until_ms.exchange(0), served = last_served_ms.exchange(0);
  if (log) log->stopped(volume, epoch, trusted, served);
}

}  // namespace nasd::cluster
