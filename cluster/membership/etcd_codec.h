// The few etcd v3 requests and replies the etcd lease authority uses, in the JSON form of etcd's
// gRPC gateway (POST /v3/kv/range, /v3/kv/txn, /v3/lease/grant|keepalive|timetolive|revoke):
// keys and values in base64, 64-bit integers as decimal strings (numbers are accepted too),
// fields equal to zero left out.
//
// A reply is input from the network: the decoders check the size, the nesting depth and every
// field's type and length before anything is used, never throw, and say what was wrong.
// tests/fuzz/cluster/cluster_etcd_reply_fuzzer.cc runs them on arbitrary bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nasd::membership::etcd {

constexpr size_t kMaxReplyBytes = 64 * 1024;  // a reply of one key is a few hundred bytes
constexpr size_t kMaxKeyBytes = 512;
constexpr size_t kMaxValueBytes = 16 * 1024;  // a lease holds a node name; the placement more
constexpr size_t kMaxMessageBytes = 512;     // an error's message is cut to this
constexpr int kMaxDepth = 12;                // deepest reply used: txn -> responses -> kvs
constexpr size_t kMaxTokenBytes = 1024;      // an auth token (simple or JWT) sent back as a header

struct KeyValue {
  std::string key, value;
  int64_t create_revision = 0;  // revision of the put that created the key (0: absent)
  int64_t mod_revision = 0;     // revision of its last change
  int64_t version = 0;
  int64_t lease = 0;            // the etcd lease it is attached to (0: none)
};

struct RangeReply {
  int64_t revision = 0;         // the store's revision when the read was served
  std::optional<KeyValue> kv;   // the one key asked for, when it exists
};

struct TxnReply {
  int64_t revision = 0;         // after the transaction: the revision of its write, if any
  bool succeeded = false;       // the compare held and the success branch ran
  std::optional<KeyValue> kv;   // the key read by a range in the branch taken, if present
};

struct LeaseReply {
  int64_t id = 0;
  int64_t ttl = 0;              // seconds left (grant: granted); 0 or less: the lease is gone
  int64_t granted_ttl = 0;      // timetolive only
};

struct ErrorReply {
  int code = 0;                 // gRPC status code (14 Unavailable, 5 NotFound, ...)
  std::string message;
};

// ---- requests ----
std::string range_request(std::string_view key);
// Creates `key` = `value` attached to `lease` only if the key does not exist (its
// create_revision is 0); otherwise reads it.
std::string create_txn(std::string_view key, std::string_view value, int64_t lease);
// Puts `key` = `value` attached to `lease` only if the key was last changed at `mod_revision`;
// otherwise reads it.
std::string replace_txn(std::string_view key, std::string_view value, int64_t lease,
                        int64_t mod_revision);
// Puts `key` = `value` (no etcd lease) only if the key was last changed at `mod_revision` (0:
// does not exist) and `held_key` was created at `held_create_revision` (a lease key still
// held by the one who took it at that epoch); otherwise reads `key`.
std::string replace_if_held_txn(std::string_view key, std::string_view value, int64_t mod_revision,
                                std::string_view held_key, int64_t held_create_revision);
// Deletes `key` only if it was last changed at `mod_revision`.
std::string delete_txn(std::string_view key, int64_t mod_revision);
std::string lease_grant_request(int64_t ttl_s);
std::string lease_id_request(int64_t id);  // keepalive, timetolive, revoke
// POST /v3/auth/authenticate (etcd user and password): the reply's token goes in the
// Authorization header of every later call.
std::string authenticate_request(std::string_view user, std::string_view password);

// ---- replies: false (and *error) unless `body` is the reply expected ----
bool decode_range(std::string_view body, RangeReply* out, std::string* error);
bool decode_txn(std::string_view body, TxnReply* out, std::string* error);
bool decode_lease_grant(std::string_view body, LeaseReply* out, std::string* error);
// The keepalive stream's one message: {"result": {...}} (or {"error": {...}}).
bool decode_keepalive(std::string_view body, LeaseReply* out, std::string* error);
bool decode_time_to_live(std::string_view body, LeaseReply* out, std::string* error);
// The authenticate reply's token: 1..kMaxTokenBytes printable characters, no spaces.
bool decode_authenticate(std::string_view body, std::string* token, std::string* error);
// The gateway's error body ({"error", "code", "message"}); false when it is not one.
bool decode_error(std::string_view body, ErrorReply* out);

std::string base64_encode(std::string_view bytes);
// False on a malformed text or a result longer than `max_bytes`.
bool base64_decode(std::string_view text, size_t max_bytes, std::string* out);

}  // namespace nasd::membership::etcd
