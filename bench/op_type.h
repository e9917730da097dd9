// The NFSv3 procedures the load generator can issue. One OpType is exactly one NFS procedure on
// the wire, so a mix percentage is a percentage of RPCs the server sees.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace nasd::bench {

enum class OpType : int {
  kGetattr,
  kSetattr,
  kLookup,
  kAccess,
  kReadlink,
  kRead,
  kWrite,
  kCreate,
  kRemove,
  kReaddir,
  kReaddirplus,
  kFsstat,
  kFsinfo,
  kCommit,
};

inline constexpr int kOpTypeCount = static_cast<int>(OpType::kCommit) + 1;

inline constexpr std::array<OpType, kOpTypeCount> kAllOpTypes = {
    OpType::kGetattr, OpType::kSetattr, OpType::kLookup,      OpType::kAccess, OpType::kReadlink,
    OpType::kRead,    OpType::kWrite,   OpType::kCreate,      OpType::kRemove, OpType::kReaddir,
    OpType::kReaddirplus, OpType::kFsstat, OpType::kFsinfo,   OpType::kCommit,
};

inline constexpr int index_of(OpType op) { return static_cast<int>(op); }

// Upper-case protocol name as RFC 1813 spells it ("GETATTR", "READDIRPLUS").
std::string_view op_name(OpType op);

// Case-insensitive inverse of op_name; nullopt for a name that is not a supported procedure.
std::optional<OpType> op_from_name(std::string_view name);

}  // namespace nasd::bench
