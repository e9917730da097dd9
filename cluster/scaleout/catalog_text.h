// A text dump of a scale-out volume's catalog (the GroupRecords of every extent), for offline
// tools: `nasd-fsck --scaleout` reads it, the volume's coordinator writes it. One line per group:
//
//   nasd-scaleout-catalog 1
//   group FILE GROUP VERSION OFFSET LENGTH N M B UNDER NODE:DRIVE ... (N+M places)
//
// The file is input from outside the process: decode_catalog bounds everything before use
// (lines <= 4096 bytes, at most kMaxCatalogGroups groups, decimal numbers without sign that fit
// 64 bits, 1 <= N <= 16, M <= 4, 1 <= B <= 16, exactly N+M places, drives < 64, LENGTH within
// the N data units) and names the line of the first error. Fuzzed by
// tests/fuzz/cluster/catalog_text_fuzzer.cc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cluster/scaleout/group_record.h"

namespace nasd::scaleout {

constexpr size_t kMaxCatalogGroups = 1u << 22;
constexpr size_t kMaxCatalogLine = 4096;

std::string encode_catalog(const std::vector<GroupRecord>& records);
bool decode_catalog(std::string_view text, std::vector<GroupRecord>* out, std::string* error);

}  // namespace nasd::scaleout
