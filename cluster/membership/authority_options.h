// Which lease authority a cluster uses, and how to reach it. Parsed from [cluster] by
// cluster/cluster_options.cc (which rejects unknown keys); turned into a LeaseAuthority by
// make_lease_authority() (lease_authority_factory.h).
//
//   authority = file      the lease files in the shared folder (`<shared_dir>/leases`): every
//                         node must reach that folder; the default, embedded on one machine
//   authority = etcd      an etcd cluster (v3 API through its JSON gateway): for nodes on
//                         several machines that share no file system they can lock on
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace nasd::membership {

struct EtcdOptions {
  // Client URLs of the etcd members (http://host:port or https://host:port). Every call tries
  // them in turn, starting with the last one that answered.
  std::vector<std::string> endpoints;
  // Where the lease keys live: `<prefix>volume-<id>`. Default /nasd/<cluster name>/, so two
  // clusters sharing one etcd never see each other's leases.
  std::string prefix;
  // TLS (https endpoints): the CA that signed the members' certificates, and this node's
  // client certificate and key (etcd --client-cert-auth). Empty: not used.
  std::string ca_file, cert_file, key_file;
  // etcd authentication (etcd `auth enable`): this user, with the password in a file only the
  // service's user may read (mode 0600: checked). The client asks /v3/auth/authenticate for a
  // token and sends it with every call, again when etcd says the token expired. Empty: none.
  std::string user, password_file;
  // The cluster key: every value written is tagged with it and every value read must carry a
  // valid tag (etcd_value_seal.h). Required; the node sets it from `[cluster] key`.
  std::vector<uint8_t> value_key;
  // Every authority call (acquire, release, inspect) ends within this, answered or not.
  std::chrono::milliseconds timeout{1500};
  // The local address this node's etcd connections leave from: its interconnect address (set
  // by ClusterOptions), like its links to the other nodes, so that to the network a node is one
  // address and a rule by address (a firewall, the fault drill's authority cut) reaches its etcd
  // traffic too. Empty, "0.0.0.0" or "::": the kernel's choice.
  std::string source_address;
};

struct AuthorityOptions {
  enum class Kind { File, Etcd };
  Kind kind = Kind::File;
  std::string lease_dir;  // File: the folder of the lease files (absolute)
  EtcdOptions etcd;       // Etcd
};

const char* authority_kind_name(AuthorityOptions::Kind kind);

}  // namespace nasd::membership
