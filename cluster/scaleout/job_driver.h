// Carries out a ProtectionJob's actions against real units (GroupIo over a UnitAccess), one
// task at a time on the calling thread: the coordinator's job loop on one node, and what the
// tests and the benchmark drive. Commits go to an optional hook (the volume persists them in
// its journal) before the DropUnits that follow them are carried out, as the machine requires.
#pragma once

#include <functional>
#include <memory>

#include "cluster/scaleout/group_io.h"
#include "cluster/scaleout/protection_job.h"

namespace nasd::scaleout {

class JobDriver {
 public:
  using CommitHook = std::function<void(const ExtentId&, const std::vector<GroupRecord>&)>;

  // Each task carries its file's policy (JobTask::policy); `policy` is the volume default the
  // job was configured with, kept in the signature for the callers.
  JobDriver(ProtectionJob* job, UnitAccess* units, ProtectionPolicy /*policy*/)
      : job_(job), io_(units), units_(units) {}
  void on_commit(CommitHook hook) { commit_ = std::move(hook); }

  // Runs tasks until the job is idle or `max_tasks` ran; returns the number of tasks run.
  int run(int64_t now_ms, int max_tasks = 1 << 30);

 private:
  void carry_out(std::vector<JobAction> actions);

  ProtectionJob* job_;
  GroupIo io_;
  UnitAccess* units_;
  CommitHook commit_;
  std::vector<JobTask> tasks_;  // assigned, not run yet (kept across run() calls)
};

}  // namespace nasd::scaleout
