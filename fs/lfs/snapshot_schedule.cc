#include "fs/lfs/snapshot_schedule.h"

#include <time.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace nasd::fs::lfs {

namespace {
constexpr int64_t kDay = 86400;
constexpr int64_t kWeek = 7 * kDay;
constexpr int64_t kMonday = 4 * kDay;  // the epoch was a Thursday
constexpr size_t kStampLength = 17;     // YYYY-MM-DD_HHMMSS

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

int64_t boundary(const SnapshotRule& r, int64_t now) {
  int64_t origin = r.label == "weekly" ? kMonday : 0;
  int64_t since = now - origin;
  int64_t floor = since >= 0 ? since / r.period : (since - r.period + 1) / r.period;
  return origin + floor * r.period;
}

// True when `name` is LABEL.<stamp>, a snapshot this rule took.
bool of_rule(const SnapshotRule& r, const std::string& name) {
  return name.size() == r.label.size() + 1 + kStampLength && name.compare(0, r.label.size(), r.label) == 0 &&
         name[r.label.size()] == '.';
}
}  // namespace

SnapshotSchedule SnapshotSchedule::parse(const std::string& text) {
  SnapshotSchedule s;
  size_t pos = 0;
  std::string all = trim(text);
  if (all.empty()) return s;
  while (pos <= all.size()) {
    size_t comma = all.find(',', pos);
    std::string item = trim(all.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    pos = comma == std::string::npos ? all.size() + 1 : comma + 1;
    size_t colon = item.find(':');
    if (colon == std::string::npos)
      throw std::invalid_argument("snapshot rule '" + item + "' is not PERIOD:KEEP");
    std::string period = trim(item.substr(0, colon)), keep = trim(item.substr(colon + 1));
    SnapshotRule r;
    if (period == "hourly") r.period = 3600;
    else if (period == "daily") r.period = kDay;
    else if (period == "weekly") r.period = kWeek;
    if (r.period) {
      r.label = period;
    } else {
      size_t digits = 0;
      while (digits < period.size() && std::isdigit(static_cast<unsigned char>(period[digits]))) digits++;
      if (digits == 0 || digits > 9 || digits + 1 != period.size())
        throw std::invalid_argument("snapshot period '" + period +
                                    "' is not hourly, daily, weekly or N followed by s, m, h or d");
      int64_t n = std::stoll(period.substr(0, digits));
      char unit = period.back();
      int64_t mult = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : unit == 'd' ? kDay : 0;
      if (mult == 0 || n <= 0)
        throw std::invalid_argument("snapshot period '" + period + "' needs a unit s, m, h or d and N >= 1");
      r.period = n * mult;
      r.label = "every" + period;
    }
    if (keep.empty() || keep.size() > 3 ||
        !std::all_of(keep.begin(), keep.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      throw std::invalid_argument("snapshot rule '" + item + "': KEEP must be a number");
    r.keep = uint32_t(std::stoul(keep));
    if (r.keep == 0 || r.keep > kMaxSnapshots)
      throw std::invalid_argument("snapshot rule '" + item + "': KEEP must be 1.." +
                                  std::to_string(kMaxSnapshots));
    for (const SnapshotRule& o : s.rules)
      if (o.label == r.label) throw std::invalid_argument("snapshot period '" + period + "' given twice");
    s.rules.push_back(r);
  }
  uint32_t total = 0;
  for (const SnapshotRule& r : s.rules) total += r.keep;
  if (total > kMaxSnapshots)
    throw std::invalid_argument("the schedule keeps " + std::to_string(total) +
                                " snapshots; a volume holds at most " + std::to_string(kMaxSnapshots));
  return s;
}

std::string scheduled_name(const std::string& label, int64_t t) {
  time_t tt = time_t(t);
  struct tm tm;
  gmtime_r(&tt, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%d_%H%M%S", &tm);
  return label + "." + buf;
}

SnapshotPlan plan_snapshots(const SnapshotSchedule& schedule,
                            const std::vector<SnapshotInfo>& existing, int64_t now) {
  SnapshotPlan plan;
  for (const SnapshotRule& r : schedule.rules) {
    int64_t b = boundary(r, now);
    std::vector<std::pair<int64_t, std::string>> mine;
    bool current = false;
    for (const SnapshotInfo& s : existing) {
      if (!of_rule(r, s.name)) continue;
      mine.push_back({s.time, s.name});
      if (s.time >= b) current = true;
    }
    if (!current) {
      std::string name = scheduled_name(r.label, b);
      bool taken = std::any_of(existing.begin(), existing.end(),
                               [&](const SnapshotInfo& s) { return s.name == name; });
      if (!taken) {
        plan.create.push_back(name);
        mine.push_back({now, name});
      }
    }
    std::sort(mine.begin(), mine.end());
    for (size_t i = 0; i + r.keep < mine.size(); i++) plan.remove.push_back(mine[i].second);
  }
  return plan;
}

}  // namespace nasd::fs::lfs
