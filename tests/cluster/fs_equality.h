// TEST FIXTURE ONLY: member-wise equality for the fs value types (fs/volume.h defines it only
// for Time and InodeId), so tests can compare whole replies and catch any dropped field.
#pragma once

#include "fs/volume.h"

namespace nasd::fs {

bool operator==(const Attr& a, const Attr& b);
bool operator==(const PreAttr& a, const PreAttr& b);
bool operator==(const Wcc& a, const Wcc& b);
bool operator==(const SetAttr& a, const SetAttr& b);
bool operator==(const Cred& a, const Cred& b);
bool operator==(const OpContext& a, const OpContext& b);
bool operator==(const DirEntry& a, const DirEntry& b);
bool operator==(const ReaddirResult& a, const ReaddirResult& b);
bool operator==(const FsStat& a, const FsStat& b);
bool operator==(const VolumeLimits& a, const VolumeLimits& b);

}  // namespace nasd::fs
