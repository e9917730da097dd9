// Slots for connections that have not yet proved who they are (the cluster links' handshake),
// counted per source address: one source holds at most `per_source` at once, all sources
// together at most `total`. A host that opens connections and says nothing then fills its own
// few slots, never the ones a real peer needs to reconnect (with one shared pool of 16, any
// host could keep the peers out, 2 s at a time, for as long as it liked).
//
// Thread-safe; no clock and no threads of its own.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>

namespace nasd::util {

class HandshakeSlots {
 public:
  HandshakeSlots(size_t per_source, size_t total) : per_source_(per_source), total_(total) {}

  // True and a slot taken for `source`; false when its own slots or all slots are in use.
  bool try_take(const std::string& source);
  // Gives back a slot try_take gave.
  void release(const std::string& source);
  size_t in_use() const;

 private:
  const size_t per_source_, total_;
  mutable std::mutex mu_;
  std::map<std::string, size_t> by_source_;
  size_t in_use_ = 0;
};

}  // namespace nasd::util
