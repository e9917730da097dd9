#include "util/log.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/dist_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <map>
#include <mutex>

namespace nasd::util {
namespace {

spdlog::level::level_enum to_spdlog(LogLevel level) {
  switch (level) {
    case LogLevel::Debug: return spdlog::level::debug;
    case LogLevel::Info: return spdlog::level::info;
    case LogLevel::Warn: return spdlog::level::warn;
    case LogLevel::Error: return spdlog::level::err;
    case LogLevel::Off: return spdlog::level::off;
  }
  return spdlog::level::info;
}

// Every room's logger shares one sink (stderr, plus the captures of tests; its mutex keeps
// lines whole) and one level.
struct Registry {
  std::mutex mu;
  std::shared_ptr<spdlog::sinks::dist_sink_mt> sink = [] {
    auto d = std::make_shared<spdlog::sinks::dist_sink_mt>();
    d->add_sink(std::make_shared<spdlog::sinks::stderr_sink_mt>());
    return d;
  }();
  std::map<std::string, std::shared_ptr<spdlog::logger>> loggers;
  std::map<std::string, std::unique_ptr<Logger>, std::less<>> rooms;
  std::atomic<LogLevel> level{LogLevel::Info};

  std::shared_ptr<spdlog::logger> get(const std::string& room) {
    std::lock_guard<std::mutex> l(mu);
    auto& slot = loggers[room];
    if (!slot) {
      slot = std::make_shared<spdlog::logger>(room, sink);
      slot->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %-5l [%n] %v", spdlog::pattern_time_type::utc);
      slot->set_level(to_spdlog(level.load()));
      slot->flush_on(spdlog::level::trace);  // stderr: every line reaches the log file at once
    }
    return slot;
  }
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: threads may log during exit
  return *r;
}

}  // namespace

std::optional<LogLevel> parse_log_level(std::string_view text) {
  if (text == "debug") return LogLevel::Debug;
  if (text == "info") return LogLevel::Info;
  if (text == "warn" || text == "warning") return LogLevel::Warn;
  if (text == "error") return LogLevel::Error;
  if (text == "off") return LogLevel::Off;
  return std::nullopt;
}

void set_log_level(LogLevel level) {
  Registry& r = registry();
  std::lock_guard<std::mutex> l(r.mu);
  r.level = level;
  for (auto& [room, logger] : r.loggers) logger->set_level(to_spdlog(level));
}

LogLevel log_level() { return registry().level.load(); }

const Logger& log(std::string_view room) {
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> l(r.mu);
    auto it = r.rooms.find(room);
    if (it != r.rooms.end()) return *it->second;
  }
  auto made = std::make_unique<Logger>(std::string(room));  // takes r.mu itself
  std::lock_guard<std::mutex> l(r.mu);
  auto [it, inserted] = r.rooms.emplace(std::string(room), std::move(made));
  return *it->second;
}

Logger::Logger(std::string room) : room_(std::move(room)), impl_(registry().get(room_)) {}

void Logger::debug(std::string_view message) const { impl_->debug("{}", message); }
void Logger::info(std::string_view message) const { impl_->info("{}", message); }
void Logger::warn(std::string_view message) const { impl_->warn("{}", message); }
void Logger::error(std::string_view message) const { impl_->error("{}", message); }
bool Logger::enabled(LogLevel level) const { return impl_->should_log(to_spdlog(level)); }

struct LogCapture::Sink : spdlog::sinks::base_sink<std::mutex> {
  explicit Sink(std::string r) : room(std::move(r)) {}
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (std::string_view(msg.logger_name.data(), msg.logger_name.size()) != room) return;
    lines.emplace_back(msg.payload.data(), msg.payload.size());
  }
  void flush_() override {}
  std::vector<std::string> snapshot() {
    std::lock_guard<std::mutex> l(mutex_);
    return lines;
  }

  const std::string room;
  std::vector<std::string> lines;  // guarded by base_sink's mutex_
};

LogCapture::LogCapture(std::string room) : sink_(std::make_shared<Sink>(std::move(room))) {
  registry().sink->add_sink(sink_);
}

LogCapture::~LogCapture() { registry().sink->remove_sink(sink_); }

std::vector<std::string> LogCapture::lines() const { return sink_->snapshot(); }

bool LogCapture::has(std::string_view text) const {
  for (const auto& l : lines())
    if (l.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace nasd::util
