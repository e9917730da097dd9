// TEST FIXTURE ONLY: the two ends of one authenticated interconnect link in a test, as the
// forwarding tests set them up: an owner node "owner" whose InterconnectServer serves the
// volumes, and a forwarding node "front" whose PeerClient reaches it on loopback, both of
// cluster "c" with one shared test key.
#pragma once

#include <cstdint>
#include <vector>

#include "cluster/interconnect/interconnect_server.h"
#include "cluster/interconnect/peer_client.h"

namespace nasd::cluster::testing {

inline std::vector<uint8_t> test_link_key() { return std::vector<uint8_t>(32, 0x5a); }

// The owner's server: any free port (InterconnectServer::port() once started).
inline interconnect::InterconnectServerOptions owner_server_options() {
  interconnect::InterconnectServerOptions so;
  so.cluster_name = "c";
  so.local_node = "owner";
  so.credentials = {test_link_key(), "owner"};
  return so;
}

// The forwarder's client of the owner's server listening on `port`.
inline interconnect::PeerClientOptions front_client_options(uint16_t port) {
  interconnect::PeerClientOptions co;
  co.port = port;
  co.cluster_name = "c";
  co.local_node = "front";
  co.expected_peer = "owner";
  co.credentials = {test_link_key(), "front"};
  return co;
}

}  // namespace nasd::cluster::testing
