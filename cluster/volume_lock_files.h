// Where a volume's NLM state waits for the volume's next owner: two files per volume in the
// cluster's shared folder (`<shared_dir>/nsm/`), beside the volume itself, so that they follow
// the volume wherever it goes -- whichever node serves it, whatever EVS it belongs to.
//
//   <volume>.clients  every client that holds locks on the volume ("address name [called]" per
//                     line, one per address the client called from and server address it
//                     locked at; a name is never rebound to another address),
//                     written (durably) before such a client's first lock there is granted:
//                     the node that takes the volume over after its owner died tells exactly
//                     these clients to reclaim (nlm::VolumeClientLog).
//   <volume>.locks    the volume's lock table (nlm/volume_handover.h), written by the node that
//                     hands the volume over on a planned move after the table was taken out
//                     (no lock can change after that), read and removed by the next node that
//                     opens the volume, before the volume is routed there.
//
// Invariant: a `.locks` file exists only between a clean hand-over and the next open, and that
// open removes it (durably, the folder synced) before anything is served: every serving period
// either ended with the table written here or ended without one (a crash, a lost lease), and a
// table is never adopted twice. So a node that finds no table knows the locks were lost and
// begins the volume's grace period; a node that finds one holds exactly what the last owner
// held. Only the volume's lease holder writes either file (tmp + fsync + rename + folder fsync).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "server/nlm/volume_client_log.h"

namespace nasd::cluster {

class VolumeLockFiles : public nlm::VolumeClientLog {
 public:
  // `dir`: the folder (created when missing); `volume_name`: a volume id's [volume] name;
  // `max_clients`: per volume (the status monitor's max_hosts).
  VolumeLockFiles(std::string dir, std::function<std::string(uint32_t)> volume_name,
                  size_t max_clients);

  bool record(uint32_t volume, const nlm::MonitoredHost& client) override;
  void forget(uint32_t volume, const std::vector<nlm::MonitoredHost>& gone) override;
  // Read from the folder (another node may have written the list since this one last did).
  std::vector<nlm::MonitoredHost> clients(uint32_t volume) override;

  // Writes the volume's table; false (with the reason) when it could not be made durable.
  bool save_table(uint32_t volume, const std::vector<uint8_t>& bytes, std::string* error);
  // The volume's table, removed from the folder; nullopt when there is none (or it is larger
  // than any table can be, or unreadable: *error says which).
  std::optional<std::vector<uint8_t>> take_table(uint32_t volume, std::string* error);

 private:
  std::string path(uint32_t volume, const char* suffix) const;
  std::vector<nlm::MonitoredHost>& cached_locked(uint32_t volume);
  bool write_locked(uint32_t volume, const std::vector<nlm::MonitoredHost>& list);

  const std::string dir_;
  const std::function<std::string(uint32_t)> volume_name_;
  const size_t max_clients_;
  std::mutex mu_;
  std::map<uint32_t, std::vector<nlm::MonitoredHost>> clients_;  // as last read or written
};

}  // namespace nasd::cluster
