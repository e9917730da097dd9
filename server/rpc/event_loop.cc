#include "server/rpc/event_loop.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace nasd::rpc {
namespace {

// How long a stopping loop waits for cancelled operations to report back.
constexpr auto kDrainGrace = std::chrono::seconds(2);

}  // namespace

EventLoop::EventLoop(unsigned queue_depth) : queue_depth_(queue_depth) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC);
  if (wake_fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
}

EventLoop::~EventLoop() { close(wake_fd_); }

int EventLoop::wait_started() {
  std::unique_lock lock(started_mu_);
  started_cv_.wait(lock, [this] { return started_; });
  return start_error_;
}

io_uring_sqe* EventLoop::next_sqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) {
    // Submission queue full: flush it to the kernel and take a fresh slot.
    io_uring_submit(&ring_);
    sqe = io_uring_get_sqe(&ring_);
  }
  return sqe;
}

void EventLoop::track(io_uring_sqe* sqe, Completion* c) {
  io_uring_sqe_set_data(sqe, static_cast<void*>(c));
  ++outstanding_;
}

bool EventLoop::accept(int fd, sockaddr* addr, socklen_t* addr_len, Completion* c) {
  if (stopping_) return false;
  io_uring_sqe* sqe = next_sqe();
  if (sqe == nullptr) return false;
  io_uring_prep_accept(sqe, fd, addr, addr_len, SOCK_CLOEXEC);
  track(sqe, c);
  return true;
}

bool EventLoop::recv(int fd, void* buf, size_t len, Completion* c) {
  if (stopping_) return false;
  io_uring_sqe* sqe = next_sqe();
  if (sqe == nullptr) return false;
  io_uring_prep_recv(sqe, fd, buf, len, 0);
  track(sqe, c);
  return true;
}

bool EventLoop::recvmsg(int fd, msghdr* msg, Completion* c) {
  if (stopping_) return false;
  io_uring_sqe* sqe = next_sqe();
  if (sqe == nullptr) return false;
  io_uring_prep_recvmsg(sqe, fd, msg, 0);
  track(sqe, c);
  return true;
}

bool EventLoop::sendmsg(int fd, const msghdr* msg, int flags, Completion* c) {
  if (stopping_) return false;
  io_uring_sqe* sqe = next_sqe();
  if (sqe == nullptr) return false;
  io_uring_prep_sendmsg(sqe, fd, msg, static_cast<unsigned>(flags));
  track(sqe, c);
  return true;
}

bool EventLoop::timeout(__kernel_timespec* delay, Completion* c) {
  if (stopping_) return false;
  io_uring_sqe* sqe = next_sqe();
  if (sqe == nullptr) return false;
  io_uring_prep_timeout(sqe, delay, 0, 0);
  track(sqe, c);
  return true;
}

void EventLoop::post(std::function<void()> fn) {
  {
    std::lock_guard lock(posted_mu_);
    posted_.push_back(std::move(fn));
  }
  // Only the first post after the loop drained its queue needs to write the eventfd.
  if (!wake_pending_.exchange(true)) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
  }
}

void EventLoop::stop() {
  stop_requested_ = true;
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
}

void EventLoop::arm_wakeup() {
  if (stopping_) return;
  io_uring_sqe* sqe = next_sqe();
  wakeup_armed_ = sqe != nullptr;  // if the ring refused, drive() retries before sleeping
  if (!wakeup_armed_) return;
  io_uring_prep_read(sqe, wake_fd_, &wake_value_, sizeof wake_value_, 0);
  track(sqe, &wakeup_);
}

void EventLoop::Wakeup::on_complete(int) {
  loop_->wakeup_armed_ = false;
  loop_->run_posted();
  loop_->arm_wakeup();
}

void EventLoop::run_posted() {
  wake_pending_ = false;  // before taking the queue, so a concurrent post() writes again
  std::vector<std::function<void()>> batch;
  {
    std::lock_guard lock(posted_mu_);
    batch.swap(posted_);
  }
  for (auto& fn : batch) fn();
}

void EventLoop::begin_stop() {
  stopping_ = true;
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) {
    io_uring_submit(&ring_);
    sqe = io_uring_get_sqe(&ring_);
  }
  if (sqe != nullptr) {
    io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
    io_uring_sqe_set_data(sqe, nullptr);  // its own completion is not tracked
  }
}

void EventLoop::reap() {
  io_uring_cqe* cqes[64];
  unsigned n = io_uring_peek_batch_cqe(&ring_, cqes, 64);
  // Copy out and release the CQ slots first: handlers submit new work as they run.
  std::pair<Completion*, int> done[64];
  for (unsigned i = 0; i < n; ++i)
    done[i] = {static_cast<Completion*>(io_uring_cqe_get_data(cqes[i])), cqes[i]->res};
  io_uring_cq_advance(&ring_, n);
  for (unsigned i = 0; i < n; ++i) {
    if (done[i].first == nullptr) continue;
    --outstanding_;
    done[i].first->on_complete(done[i].second);
  }
}

void EventLoop::run() {
  io_uring_params params{};
  // Completions are only reaped by this thread, so the kernel need not interrupt it.
  params.flags = IORING_SETUP_COOP_TASKRUN;
  int rc = io_uring_queue_init_params(queue_depth_, &ring_, &params);
  if (rc == -EINVAL) {  // older kernel without COOP_TASKRUN
    params = {};
    rc = io_uring_queue_init_params(queue_depth_, &ring_, &params);
  }
  {
    std::lock_guard lock(started_mu_);
    started_ = true;
    start_error_ = rc < 0 ? rc : 0;
  }
  started_cv_.notify_all();
  if (rc < 0) return;
  drive();
  io_uring_queue_exit(&ring_);
}

void EventLoop::drive() {
  arm_wakeup();
  std::chrono::steady_clock::time_point deadline{};
  for (;;) {
    if (stop_requested_ && !stopping_) {
      begin_stop();
      deadline = std::chrono::steady_clock::now() + kDrainGrace;
    }
    if (stopping_ && (outstanding_ == 0 || std::chrono::steady_clock::now() >= deadline)) break;
    if (!stopping_ && !wakeup_armed_) arm_wakeup();
    int rc;
    if (stopping_) {
      __kernel_timespec ts{0, 100 * 1000 * 1000};
      io_uring_cqe* cqe = nullptr;
      rc = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &ts, nullptr);
    } else {
      rc = io_uring_submit_and_wait(&ring_, 1);
    }
    if (rc < 0 && rc != -EINTR && rc != -ETIME && rc != -EBUSY && rc != -EAGAIN) break;
    reap();
  }
}

}  // namespace nasd::rpc
