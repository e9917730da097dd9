// A partner that keeps a second copy of every journal record, like the second NVRAM card of an
// HA pair: a mutation is acknowledged only once both the local region and the partner hold it.
// The journal feeds records in log order; the partner lays them out at the same logical
// positions in its own region and acknowledges cumulatively ("I hold everything before X").
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "nvram/record.h"

namespace nasd::nvram {

// What the partner needs to know about the log it copies, sent at every (re)connect.
struct MirrorHello {
  uint64_t uuid = 0;      // RegionHeader::uuid
  uint64_t log_size = 0;
  uint64_t head = 0;      // oldest live record
  uint64_t tail = 0;      // end of the complete records; the partner holds nothing beyond it
  uint64_t epoch = 0;
};

class Mirror {
 public:
  // Callbacks from the mirror's own threads into the journal.
  class Listener {
   public:
    virtual ~Listener() = default;
    virtual MirrorHello mirror_hello() = 0;
    // (Re)connected: the partner holds every record before `resume_pos`, send from there.
    virtual void mirror_connected(uint64_t resume_pos) = 0;
    // The partner holds (durably) every record before `end_pos`.
    virtual void mirror_acked(uint64_t end_pos) = 0;
    virtual void mirror_lost(const std::string& why) = 0;
  };

  virtual ~Mirror() = default;
  // Starts connecting (and reconnecting whenever the link drops).
  virtual void start(Listener* listener) = 0;
  // Queues records (in log order, contiguous with what was sent before) for the partner without
  // waiting for its ack. False when there is no connection; the journal resends after the next
  // mirror_connected().
  virtual bool replicate(std::span<const RecordView> records) = 0;
  // Tells the partner that records before `head` are no longer needed.
  virtual void trim(uint64_t head) = 0;
  // Drops the current connection (e.g. the partner stopped acking); reconnects afterwards.
  virtual void reset(const std::string& why) = 0;
  virtual void stop() = 0;
  virtual std::string describe() const = 0;
};

}  // namespace nasd::nvram
