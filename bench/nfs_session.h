// One "mount point" of a load process: a MOUNT v3 call for the export's root handle, then a TCP
// connection to the NFS v3 program that all of that process's requests to the target go over.
// Raw libnfs calls only, so each load operation is exactly one NFS procedure (the high-level
// path API would add LOOKUPs of its own).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "bench/file_handle.h"
#include "bench/server_facts.h"
#include "bench/target.h"

namespace nasd::bench {

class NfsSession {
 public:
  // Connects and mounts; nullptr with `*error` saying which step failed.
  static std::unique_ptr<NfsSession> open(const Target& target, int timeout_ms, std::string* error);
  ~NfsSession();
  NfsSession(const NfsSession&) = delete;
  NfsSession& operator=(const NfsSession&) = delete;

  rpc_context* rpc() const { return rpc_; }
  const FileHandle& root() const { return root_; }
  const Target& target() const { return target_; }
  const ServerFacts& facts() const { return facts_; }
  int timeout_ms() const { return timeout_ms_; }

 private:
  NfsSession(Target target, int timeout_ms) : target_(std::move(target)), timeout_ms_(timeout_ms) {}
  bool mount(std::string* error);
  bool connect_nfs(std::string* error);
  bool query_facts(std::string* error);

  Target target_;
  int timeout_ms_;
  rpc_context* rpc_ = nullptr;
  FileHandle root_;
  ServerFacts facts_;
};

}  // namespace nasd::bench
