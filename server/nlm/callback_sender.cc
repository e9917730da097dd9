#include "server/nlm/callback_sender.h"

#include <algorithm>

namespace nasd::nlm {

CallbackSender::CallbackSender(Options options) : options_(options) {
  thread_ = std::thread([this] { run(); });
}

CallbackSender::~CallbackSender() { stop(); }

void CallbackSender::post(std::string host, uint32_t prog, uint32_t vers, Call call,
                          GiveUp give_up) {
  std::lock_guard lock(mu_);
  if (stopping_) return;
  if (queue_.size() >= options_.max_queue) {
    failed_++;
    return;
  }
  queue_.push_back(Job{std::move(host), prog, vers, std::move(call), std::move(give_up), 0,
                       std::chrono::steady_clock::now()});
  cv_.notify_one();
}

void CallbackSender::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    queue_.clear();
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

uint64_t CallbackSender::sent() const {
  std::lock_guard lock(mu_);
  return sent_;
}

uint64_t CallbackSender::failed() const {
  std::lock_guard lock(mu_);
  return failed_;
}

bool CallbackSender::attempt(Job& job) {
  timeval tv{};
  tv.tv_sec = options_.timeout.count() / 1000;
  tv.tv_usec = (options_.timeout.count() % 1000) * 1000;
  // Looks the program up through the portmapper at `host`, then calls over UDP.
  CLIENT* client = clnt_create_timed(job.host.c_str(), job.prog, job.vers, "udp", &tv);
  if (!client) return false;
  clnt_control(client, CLSET_TIMEOUT, reinterpret_cast<char*>(&tv));
  client->cl_auth = authunix_create_default();
  bool done = false;
  try {
    done = job.call(client, tv);
  } catch (const std::exception&) {
    done = true;  // a job that throws is not worth repeating
  }
  if (client->cl_auth) auth_destroy(client->cl_auth);
  clnt_destroy(client);
  return done;
}

void CallbackSender::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (queue_.empty()) {
      cv_.wait(lock);
      continue;
    }
    auto now = std::chrono::steady_clock::now();
    auto ready = std::find_if(queue_.begin(), queue_.end(),
                              [&](const Job& j) { return j.not_before <= now; });
    if (ready == queue_.end()) {
      auto next = std::min_element(queue_.begin(), queue_.end(), [](const Job& a, const Job& b) {
        return a.not_before < b.not_before;
      });
      cv_.wait_until(lock, next->not_before);
      continue;
    }
    Job job = std::move(*ready);
    queue_.erase(ready);
    lock.unlock();
    bool done = attempt(job);
    GiveUp give_up;
    lock.lock();
    if (done) {
      sent_++;
    } else if (++job.attempt < options_.attempts && !stopping_) {
      job.not_before = std::chrono::steady_clock::now() + options_.retry_interval;
      queue_.push_back(std::move(job));
    } else {
      failed_++;
      give_up = std::move(job.give_up);
    }
    if (give_up) {
      lock.unlock();
      give_up();
      lock.lock();
    }
  }
}

}  // namespace nasd::nlm
