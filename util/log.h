// Logging for every room: one line per message to stderr, each line carrying the time (UTC, to
// the millisecond), the level and the room that wrote it:
//   2026-12-03T08:01:02.345Z info  [nvram] volume 1: replayed 12 records
// Backed by spdlog; this header keeps spdlog out of every room's includes (it is heavy to
// compile). Thread-safe: whole lines never interleave. The level is process-wide, set once at
// start from `[node] log_level` or `--log-level` (nasd) and `--log-level` (nasd-mirror).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spdlog {
class logger;
}

namespace nasd::util {

enum class LogLevel { Debug, Info, Warn, Error, Off };

// "debug", "info", "warn", "error", "off"; nullopt for anything else.
std::optional<LogLevel> parse_log_level(std::string_view text);
// Applies to every room's logger, those made before and after. Default: Info.
void set_log_level(LogLevel level);
LogLevel log_level();

class Logger;
// The logger of `room` ("nvram", "cluster", "rpc", ...), made on first use and kept:
//   util::log("nvram").warn("mirror lost: " + why);
const Logger& log(std::string_view room);

class Logger {
 public:
  explicit Logger(std::string room);

  void debug(std::string_view message) const;
  void info(std::string_view message) const;
  void warn(std::string_view message) const;
  void error(std::string_view message) const;
  bool enabled(LogLevel level) const;

  const std::string& room() const { return room_; }

 private:
  std::string room_;
  std::shared_ptr<spdlog::logger> impl_;
};

// Keeps, while it lives, the messages one room logs (at any level the process logs), besides
// writing them as usual. For tests that check what an operator would be told.
class LogCapture {
 public:
  explicit LogCapture(std::string room);
  ~LogCapture();
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::vector<std::string> lines() const;
  // True when a message captured so far contains `text`.
  bool has(std::string_view text) const;

 private:
  struct Sink;
  std::shared_ptr<Sink> sink_;
};

}  // namespace nasd::util
