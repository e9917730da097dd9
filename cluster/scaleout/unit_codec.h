// The wire form of a stripe-unit call between nodes (interconnect MessageType::UnitCall): read,
// write or delete one unit on one of the serving node's drives, sync a drive, or report which
// drives are healthy. Carried in sealed interconnect frames, so only cluster members send them;
// still every field is bounded before use (a unit is at most kMaxUnitBytes, a node at most
// kMaxDrivesPerNode drives) and the decoders accept only exact lengths.
//
//   request: u8 version(1) | u8 op | u16 drive | u64 file | u64 group | u64 version |
//            u16 index | u32 length | length bytes (Put only; 0 otherwise)
//   reply:   u8 version(1) | u8 op | u8 status | u32 length | length bytes
//            (Get: the unit; Health: one byte per drive, 1 healthy)
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cluster/scaleout/unit_store.h"

namespace nasd::scaleout {

constexpr uint16_t kMaxDrivesPerNode = 64;
constexpr size_t kUnitRequestHeaderBytes = 34;
constexpr size_t kUnitReplyHeaderBytes = 7;

enum class UnitOp : uint8_t { Put = 1, Get = 2, Remove = 3, Sync = 4, Health = 5, List = 6 };
// List: the request's key is where the page starts (inclusive) and its data is exactly a u32,
// the most keys wanted (1..kMaxListKeys); the reply's data (status Ok) is u8 more | n keys of
// kListedKeyBytes {u64 file, u64 group, u64 version, u16 index}, n <= kMaxListKeys, ascending.
constexpr size_t kListedKeyBytes = 26;
std::vector<uint8_t> encode_key_list(const std::vector<UnitKey>& keys, bool more);
// False unless `data` is exactly such a page (ascending keys, at most `max`).
bool decode_key_list(const std::vector<uint8_t>& data, uint32_t max, std::vector<UnitKey>* keys,
                     bool* more);

struct UnitRequest {
  UnitOp op = UnitOp::Get;
  uint16_t drive = 0;
  UnitKey key;
  std::vector<uint8_t> data;  // Put only (List: the u32 maximum)
};

struct UnitReply {
  UnitOp op = UnitOp::Get;
  UnitStatus status = UnitStatus::Ok;
  std::vector<uint8_t> data;  // Get: the unit; Health: per-drive flags
};

std::vector<uint8_t> encode_unit_request(const UnitRequest& r);
bool decode_unit_request(std::span<const uint8_t> in, UnitRequest* out);
std::vector<uint8_t> encode_unit_reply(const UnitReply& r);
// `expected` is the op of the request this answers (a reply for another op is refused).
bool decode_unit_reply(std::span<const uint8_t> in, UnitOp expected, UnitReply* out);

}  // namespace nasd::scaleout
