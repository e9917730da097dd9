#include "bench/drill/serving_check.h"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

namespace nasd::drill {
namespace {

std::optional<int64_t> parse_ms(const std::string& text) {
  if (text == "-") return 0;
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(text);
}

// The value of `key=` in `word`, or nullopt.
std::optional<int64_t> field(const std::string& word, const std::string& key) {
  if (word.rfind(key + "=", 0) != 0) return std::nullopt;
  return parse_ms(word.substr(key.size() + 1));
}

}  // namespace

std::vector<ServingInterval> serving_intervals(const NodeServingLog& log, int64_t end_ms,
                                               std::vector<std::string>* notes) {
  std::vector<ServingInterval> out;
  std::map<std::string, ServingInterval> open;  // volume -> interval without its end yet
  std::vector<int64_t> kills = log.kills;
  std::sort(kills.begin(), kills.end());
  // Ends everything open: the incarnation died (or the log ends at `until`).
  auto close_all = [&](int64_t until, bool boot) {
    for (auto& [volume, iv] : open) {
      auto kill = std::lower_bound(kills.begin(), kills.end(), iv.start_ms);
      if (kill != kills.end() && *kill <= until) {
        iv.end_ms = *kill;
        iv.ended = "kill";
      } else {
        iv.end_ms = until;
        iv.ended = boot ? "boot" : "open";
        if (boot)
          notes->push_back(log.node + ": died while serving " + volume +
                           " without a recorded kill (bounded by its next boot)");
      }
      out.push_back(iv);
    }
    open.clear();
  };
  std::istringstream in(log.text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::istringstream words(line);
    std::string ms_text, what, volume, epoch_text, w1, w2;
    words >> ms_text >> what;
    auto bad = [&] { notes->push_back(log.node + " serving.log line " + std::to_string(number) + " unreadable: " + line); };
    auto ms = parse_ms(ms_text);
    if (!ms || *ms == 0) {
      if (!line.empty()) bad();
      continue;
    }
    if (what == "boot") {
      close_all(*ms, true);
      continue;
    }
    words >> volume >> epoch_text;
    auto epoch = parse_ms(epoch_text);
    if (volume.empty() || !epoch) {
      bad();
      continue;
    }
    if (what == "ready") {
      auto it = open.find(volume);
      if (it != open.end() && it->second.ready_ms == 0) it->second.ready_ms = *ms;
      continue;
    }
    if (what == "start") {
      // A second start without a stop keeps the first: the interval only grows.
      if (!open.count(volume))
        open[volume] = ServingInterval{log.node, volume, static_cast<uint64_t>(*epoch), *ms, 0, 0, ""};
    } else if (what == "stop") {
      words >> w1 >> w2;
      auto trusted = field(w1, "trusted_until");
      auto served = field(w2, "last_served");
      auto it = open.find(volume);
      if (!trusted || !served) {
        bad();
        continue;
      }
      if (it == open.end()) {
        notes->push_back(log.node + ": stop of " + volume + " without a start (line " + std::to_string(number) + ")");
        continue;
      }
      ServingInterval iv = it->second;
      open.erase(it);
      iv.end_ms = *ms;
      iv.ended = "stop";
      if (*trusted > 0) {
        const int64_t bound = std::max(*trusted, *served);
        if (bound < iv.end_ms) {
          iv.end_ms = std::max(bound, iv.start_ms);
          iv.ended = "lease";
        }
      }
      out.push_back(iv);
    } else {
      bad();
    }
  }
  close_all(end_ms, false);
  return out;
}

std::string ServingOverlap::describe() const {
  std::ostringstream o;
  o << "volume " << first.volume << " served by " << first.node << " [" << first.start_ms << ", "
    << first.end_ms << "] (epoch " << first.epoch << ", ended by " << first.ended << ") and by "
    << second.node << " [" << second.start_ms << ", " << second.end_ms << "] (epoch " << second.epoch
    << ", ended by " << second.ended << "): " << overlap_ms << " ms at once";
  return o.str();
}

std::vector<ServingOverlap> find_overlaps(const std::vector<ServingInterval>& intervals, int64_t skew_ms) {
  std::map<std::string, std::vector<const ServingInterval*>> by_volume;
  for (const ServingInterval& iv : intervals) by_volume[iv.volume].push_back(&iv);
  std::vector<ServingOverlap> out;
  for (auto& [volume, list] : by_volume) {
    std::sort(list.begin(), list.end(),
              [](const ServingInterval* a, const ServingInterval* b) { return a->start_ms < b->start_ms; });
    for (size_t i = 0; i < list.size(); ++i)
      for (size_t j = i + 1; j < list.size() && list[j]->start_ms < list[i]->end_ms + skew_ms; ++j) {
        if (list[i]->node == list[j]->node) continue;
        const int64_t shared = std::min(list[i]->end_ms, list[j]->end_ms) + skew_ms - list[j]->start_ms;
        if (shared > 0) out.push_back(ServingOverlap{*list[i], *list[j], shared});
      }
  }
  return out;
}

}  // namespace nasd::drill
