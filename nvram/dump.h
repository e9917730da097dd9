// Human-readable listing of a region (a primary's nvram.img or a mirror's copy).
#pragma once

#include <string>

#include "nvram/region.h"

namespace nasd::nvram {

// First line describes the header, then one line per live record:
//   "record pos=4096 vol=0 seq=17 epoch=3 len=4188 WRITE file=5/1 offset=0 len=4096 uid=0"
std::string dump_region(const Region& region);

}  // namespace nasd::nvram
