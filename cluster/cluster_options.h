// The [cluster] and [peer NAME] sections: this node's interconnect address and, for every other
// node, where to reach it and which volumes it owns. A node owns every [volume] no peer claims.
// Without a [cluster] section the node runs alone and these are not read.
//
//   [cluster]
//   name = lab                       # nodes refuse a peer of another cluster
//   interconnect = 127.0.0.1:7001    # where this node's interconnect listens
//   key = /etc/nasd/cluster.key      # the cluster key, the same file on every node (default:
//                                    # cluster.key in the data folder, created when missing)
//   allowed_peers = 10.0.0.0/24      # only these IPv4 addresses/networks may connect to the
//                                    # interconnect and the mirror. Default: the interconnect
//                                    # addresses of this config's nodes (this one, [peer]s,
//                                    # [member]s; links leave from them), plus members that
//                                    # join later; 0.0.0.0/0 lets any address try the key
//   [peer node1]
//   interconnect = 127.0.0.1:7002
//   volumes = v1                     # [volume NAME]s that node1 owns and this node forwards to it
//
// Failover (an HA pair: exactly one peer) is on when [cluster] names a shared folder. The pair is
// a ring of two: it is read as two [member]s (below) that mirror to each other, each with one EVS
// that is the node's own [node] listen/nfs_port/mount_port, and runs as any failover cluster:
//   [cluster]
//   shared_dir = ../san              # the "SAN": every volume's backing file and the lease files
//   mirror_listen = 127.0.0.1:7101   # where this node keeps the copy of its partner's NVRAM
//   failback = manual                # or auto: take the home volumes back once the partner lets go
//   heartbeat_ms = 200               # partner suspected after missed_heartbeats silent intervals
//   missed_heartbeats = 5
//   lease_ms = 4000                  # how long a volume lease lasts at the authority
//   startup_grace_ms = 10000         # after a start, wait this long for a silent partner
//   authority = file                 # who grants the volume leases: file (the lease files in
//                                    # <shared_dir>/leases) or etcd:
//   etcd_endpoints = https://10.0.0.1:2379, https://10.0.0.2:2379, https://10.0.0.3:2379
//   etcd_prefix = /nasd/lab/         # default /nasd/<name>/
//   etcd_ca = /etc/nasd/etcd-ca.pem  # https endpoints: the members' CA, and this node's client
//   etcd_cert = /etc/nasd/etcd-client.pem   # certificate and key (etcd --client-cert-auth)
//   etcd_key = /etc/nasd/etcd-client.key
//   etcd_timeout_ms = 1500           # every lease call ends within this, answered or not
//   etcd_user = nasd                 # etcd authentication (auth enable): this user, with the
//   etcd_password_file = etcd.pass   # password in a file of mode 0600
//   etcd_allow_insecure = false      # http:// to a host other than this one's loopback is
//                                    # refused unless true (leases and placement in the clear)
//   [peer node1]
//   mirror = 127.0.0.1:7102          # the partner's mirror: this node's journal is copied there
//   listen = 127.0.0.1               # the partner's virtual server, served here after a takeover
//   nfs_port = 2149
//   mount_port = 20148
//
// A cluster of 2 to 8 nodes is described once, in one file that every node reads through
// `[node] cluster_config = cluster.conf` (the [node] section stays the node's own): a
// [member NAME] per node, an [evs NAME] per virtual server, and every [volume] and [export].
//   [cluster]
//   name = lab
//   key = /etc/nasd/cluster.key
//   shared_dir = /srv/san            # optional: failover (the SAN and the lease files)
//   authority = file                 # who decides ownership: file (leases on shared_dir) | etcd
//   etcd_endpoints = https://10.0.0.1:2379, https://10.0.0.2:2379
//   [member n1]
//   interconnect = 10.0.0.1:7001
//   mirror_listen = 10.0.0.1:7101    # copies of the NVRAM of the nodes it covers: the k-th
//                                    # covered node (in member order) mirrors to port + k
//   mirror_to = n2                   # whose mirror holds n1's journal (default: the next
//                                    # primary in member order, a ring; the standby if any)
//   role = primary                   # or standby: serves nothing, covers every primary;
//                                    # or storage: adds its drives to the scale-out volume and
//                                    # serves every path by forwarding; no EVS, in no NVRAM
//                                    # ring (covers nobody, mirrored nowhere), so it can join a
//                                    # running cluster (nasd-admin join, deploy/add-node.sh)
//   [evs evs1]                       # an Enterprise Virtual Server: an address and its volumes
//   node = n1
//   listen = 10.0.2.1                # an address already on every host (loopback), or:
//   address = 10.0.4.11/24           # put on `interface` by the node serving it, announced with
//   interface = eth1                 # gratuitous ARP, removed when it lets go (same name on
//                                    # every host)
//   nfs_port = 2049
//   mount_port = 20048
//   volumes = v0, v1
// The node finds itself by its [node] name; every other member becomes a [peer] as above.
#pragma once

#include <cstdint>
#include <map>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cluster/address/interface_address.h"
#include "cluster/membership/authority_options.h"
#include "util/config.h"

namespace nasd::cluster {

struct PeerOptions {
  std::string name;
  std::string host;
  uint16_t port = 0;
  std::vector<std::string> volumes;  // volume section names
  std::string mirror;  // failover: where this node's journal is mirrored if it is that peer
};

// [member NAME]: one node of an N-node cluster.
struct MemberOptions {
  std::string name;
  std::string host;  // interconnect
  uint16_t port = 0;
  std::string mirror_host;  // where it keeps the NVRAM copies of the nodes it covers
  uint16_t mirror_port = 0;
  std::string mirror_to;    // the member holding this node's mirror ("" for a standby)
  bool standby = false;
  bool storage = false;     // role = storage: drives for the scale-out volume, no EVS, no ring
  std::vector<std::string> covers;  // members whose mirror it holds, in member order
  // The mirror address this node's journal is copied to: mirror_to's mirror_listen host, port
  // + this node's index among the nodes mirror_to covers.
  std::string mirror_target;
};

// [evs NAME]: a virtual server, served by whichever node serves its volumes.
struct EvsOptions {
  std::string name;
  std::string node;  // its home node
  std::string listen;
  uint16_t nfs_port = 0, mount_port = 0;
  std::vector<std::string> volumes;
  // `address = 10.0.4.11/24` and `interface = eth1` (instead of `listen`): the serving node puts
  // the address on that interface and announces it (cluster/address/); nullopt: the address is
  // already on the host (loopback, or configured by the administrator) and only bound.
  std::optional<address::InterfaceAddress> on_interface;
  // The pair form: this EVS is its node's own [node] address (listen, nfs_port, mount_port),
  // which moves to the partner with the node's volumes; the node has no fixed address then.
  bool is_node_address = false;
};

struct FailoverOptions {
  std::string shared_dir;     // absolute
  std::string mirror_host;    // this node's mirror of the partner's journal
  uint16_t mirror_port = 0;
  bool auto_failback = false;
  int64_t heartbeat_ms = 200;
  int missed_heartbeats = 5;
  int64_t lease_ms = 4000;
  int64_t startup_grace_ms = 10000;  // a partner never heard from is not taken over before
};

// `[cluster] allowed_peers`: IPv4 addresses and networks (a.b.c.d or a.b.c.d/len).
class AddressList {
 public:
  // Throws ConfigError naming `what` on a malformed entry.
  static AddressList parse(const std::vector<std::string>& entries, const std::string& what);
  bool empty() const { return nets_.empty(); }
  // True for an address in one of the networks (or for any address when the list is empty).
  bool allows(const std::string& ipv4) const;
  // Adds one address (a.b.c.d); false (nothing added) for anything else, a name or 0.0.0.0.
  bool add_address(const std::string& ipv4);

 private:
  std::vector<std::pair<uint32_t, uint32_t>> nets_;  // address, mask (host order)
};

struct ClusterOptions {
  std::string name;
  std::string host;
  uint16_t port = 0;
  std::string key_file;  // absolute; empty: cluster.key in the node's data folder
  AddressList allowed_peers;
  // allowed_peers was not configured and is the nodes' addresses (a joining member's is added
  // when it joins). Empty `allowed_peers_open` otherwise; set when no default could be made
  // (a node's address is a name or every interface): why any address may try the handshake.
  bool allowed_peers_default = false;
  std::string allowed_peers_open;
  std::vector<PeerOptions> peers;
  std::optional<FailoverOptions> failover;  // set with [cluster] shared_dir
  // Who grants the volume leases (membership::make_lease_authority). File: lease_dir is
  // <shared_dir>/leases (empty without a shared folder).
  membership::AuthorityOptions authority;
  // Failover clusters: every member (this node too) and every EVS. The N-node form names them
  // ([member], [evs]); the pair form (one [peer] and shared_dir) is read as the ring of two it
  // is: two members mirroring to each other, and an EVS per node that is the node's own address.
  // Empty for a static cluster of [peer]s.
  std::vector<MemberOptions> members;
  std::vector<EvsOptions> evs;

  // Forwarded calls: each waits at most forward_timeout_ms for the owner (then Jukebox), and at
  // most forward_slots of them are in flight to one owner at once (more get Jukebox at once).
  // A waiting call holds no executor thread (it parks), so the bound is about how much may
  // pile up at a slow or paused owner, not about threads.
  std::chrono::milliseconds forward_timeout{5000};
  size_t forward_slots = 256;

  // nullopt without a [cluster] section. Throws ConfigError on an unknown key, a bad address,
  // a peer without volumes, a volume claimed twice or a volume with no [volume] section.
  static std::optional<ClusterOptions> from_config(const Config& config);
  // The peer that owns [volume NAME], or nullptr when this node owns it.
  const PeerOptions* owner_of(const std::string& volume) const;
  // A failover cluster's members are known (both forms of config).
  bool n_node() const { return !members.empty(); }
  const MemberOptions* member(const std::string& name) const;
  // N-node: the EVS that serves [volume NAME], or nullptr.
  const EvsOptions* evs_of_volume(const std::string& volume) const;

 private:
  static membership::AuthorityOptions authority_from_config(const Config& config,
                                                           const ConfigSection& cluster,
                                                           const std::string& cluster_name);
  // The [member] and [evs] sections of an N-node cluster, seen from node `self`.
  void members_from_config(const Config& config, const std::string& self);
  // The pair form ([cluster] mirror_listen, one [peer] with mirror and virtual server) as two
  // [member]s and their two EVSes.
  void pair_as_members(const Config& config, const std::string& self);
  static FailoverOptions failover_from_config(const Config& config, const ConfigSection& cluster);
  // allowed_peers when the config names none: every node's interconnect address.
  void default_allowed_peers();
};

// Whether an http(s):// URL names this host's loopback (127.0.0.0/8, localhost, [::1]).
bool url_host_is_loopback(const std::string& url);

// "host:port" -> parts; throws ConfigError naming `what`.
void parse_host_port(const std::string& text, const std::string& what, std::string* host,
                     uint16_t* port);

}  // namespace nasd::cluster
