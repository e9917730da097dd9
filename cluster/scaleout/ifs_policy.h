// Per-directory protection policies of the scale-out volume (OneFS: `isi set -p +3d:1n DIR`).
// Pure functions over the metadata (ifs_state.h); no I/O, no locks.
//
// A directory may carry a policy (IfsInode::policy). A file's effective policy is that of the
// nearest directory above it that carries one (its parent first, then up towards the root),
// else the volume's default ([volume] protection). A directory's own effective policy starts
// with itself. New groups of a file are planned with its effective policy at the time they
// are written; groups written earlier keep their shape until the protection job re-lays them
// (JobKind::Restripe, OneFS SetProtectPlus), so a rename into another directory moves no
// bytes by itself.
//
// Invariants: the walk up is bounded by the number of inodes (a damaged parent chain cannot
// loop); a policy stored on a directory is valid (validate() empty) and was honourable on the
// cluster when it was set (check_honourable).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "cluster/scaleout/ifs_state.h"
#include "cluster/scaleout/layout.h"
#include "cluster/scaleout/protection_policy.h"

namespace nasd::scaleout {

enum class PolicySource : uint8_t { Directory, Ancestor, Volume };
const char* policy_source_name(PolicySource s);

struct EffectivePolicy {
  ProtectionPolicy policy;
  PolicySource source = PolicySource::Volume;
  uint64_t from = 0;  // the directory whose policy applies (0: the volume default)
};

// The policy that governs inode `ino` (a file: its nearest ancestor's; a directory: its own,
// else its nearest ancestor's), or the volume default.
EffectivePolicy effective_policy(const IfsState& state, uint64_t ino,
                                 const ProtectionPolicy& volume_default);

// Every regular file whose effective policy differs from the volume default, with that
// policy: what the protection job needs to judge each group's shape (JobConfig::file_policy).
std::map<uint64_t, ProtectionPolicy> file_policies(const IfsState& state,
                                                   const ProtectionPolicy& volume_default);

// The inode at `path`, absolute within the volume ("/" is its root, "/a/b" a path below it;
// no "." or "..", components <= 255 bytes, path <= 4096 bytes). False and why otherwise.
bool resolve_path(const IfsState& state, std::string_view path, uint64_t* ino, std::string* why);

// The path of a directory (for the admin's "inherited from /a"); "?" if the chain is broken.
std::string path_of(const IfsState& state, uint64_t ino);

// Empty when `policy` can be honoured at full protection by the cluster's members (each
// counted alive with all its drives): at least one data unit plus M parity units fit at b per
// node on distinct drives, and a fixed width N+M fits too. Otherwise what it needs.
std::string check_honourable(const ProtectionPolicy& policy, const Topology& members);

}  // namespace nasd::scaleout
