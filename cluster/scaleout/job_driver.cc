#include "cluster/scaleout/job_driver.h"

namespace nasd::scaleout {

void JobDriver::carry_out(std::vector<JobAction> actions) {
  for (JobAction& a : actions) {
    switch (a.kind) {
      case JobAction::Kind::Assign:
        tasks_.push_back(std::move(a.task));
        break;
      case JobAction::Kind::Commit:
        if (commit_) commit_(a.extent, a.records);
        break;
      case JobAction::Kind::DropUnits:
        for (const UnitRef& u : a.units) units_->remove(u.place, u.key);
        break;
    }
  }
}

int JobDriver::run(int64_t now_ms, int max_tasks) {
  carry_out(job_->take_actions());
  int ran = 0;
  while (!tasks_.empty() && ran < max_tasks) {
    JobTask t = std::move(tasks_.front());
    tasks_.erase(tasks_.begin());
    TaskResult result;
    result.task = t.id;
    std::vector<UnitPlace> balanced;
    if (t.kind == JobKind::Restripe) {
      result.ok = io_.restripe_group(t.record, t.policy, job_->topology(), t.first_new_version,
                                     &result.replacement, &result.units_rebuilt, &result.error);
    } else if (t.kind == JobKind::Rebalance &&
        !rebalance_units(t.record.shape, job_->topology(), t.record.places, t.record.file,
                         t.record.group, &balanced).empty()) {
      result.ok = io_.rebalance_group(t.record, job_->topology(), t.first_new_version,
                                      &result.replacement, &result.units_rebuilt, &result.error);
    } else {
      // Re-protect and scrub are the same repair: rebuild what is unreadable or misplaced (a
      // rebalance of a group balanced meanwhile does the scrub it replaced).
      result.ok = io_.repair_group(t.record, t.policy, job_->topology(), t.first_new_version,
                                   &result.replacement, &result.units_rebuilt, &result.error);
    }
    job_->task_done(now_ms, result);
    ++ran;
    carry_out(job_->take_actions());
  }
  return ran;
}

}  // namespace nasd::scaleout
