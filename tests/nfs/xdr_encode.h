// Test helper: the XDR encoding of one argument value (rpcgen's routine), for building calls.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "server/nfs/xdr/xdr_codec.h"

namespace nasd::nfs::testing {

template <typename T>
std::vector<uint8_t> encode(xdr::Routine<T> routine, const T& value) {
  std::vector<uint8_t> out;
  EXPECT_TRUE(xdr::append(routine, value, &out));
  return out;
}

}  // namespace nasd::nfs::testing
