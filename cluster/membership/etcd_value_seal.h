// The tag on every value nasd writes to etcd (the volume leases' holder names, the placement),
// so that whoever can write to etcd but lacks the cluster key cannot name a lease's holder (and
// force a failover) nor edit the placement: a value is
//   <value>\n#nasd-hmac-sha256 <64 hex digits>
// where the MAC, under the cluster key, covers a domain string, the etcd key and the value
// (a value cannot be moved to another key). A value without a valid tag is refused: the lease
// authority reports it Unreachable (never a grant or a holder) and the placement store as an
// error, each naming the key.
//
// Not covered: an etcd writer can still delete or hold keys (deny service), and can put back a
// value the cluster itself wrote earlier under the same key (a replay); etcd's own
// authentication (EtcdOptions::user) and TLS keep such writers out.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "util/hmac_sha256.h"

namespace nasd::membership {

class EtcdValueSeal {
 public:
  // Throws std::invalid_argument when `key` is shorter than 16 bytes.
  explicit EtcdValueSeal(std::span<const uint8_t> key);

  std::string seal(std::string_view etcd_key, std::string_view value) const;
  // The value inside `sealed` when its tag verifies for `etcd_key`; else false and *error.
  bool open(std::string_view etcd_key, std::string_view sealed, std::string* value,
            std::string* error) const;

 private:
  std::string tag(std::string_view etcd_key, std::string_view value) const;
  util::HmacSha256 mac_;
};

}  // namespace nasd::membership
