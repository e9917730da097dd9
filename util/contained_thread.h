// Every long-lived thread of a server starts here, so that the error rule's last clause holds
// (util/README.md): an exception that escapes a thread's body is logged at `error` under its
// room and ends that thread only, never the process (std::terminate).
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <thread>

#include "util/log.h"

namespace nasd::util {

inline std::thread contained_thread(std::string room, std::string what, std::function<void()> body) {
  return std::thread([room = std::move(room), what = std::move(what), body = std::move(body)] {
    try {
      body();
    } catch (const std::exception& e) {
      log(room).error(what + " thread stopped by an unexpected error: " + e.what());
    } catch (...) {
      log(room).error(what + " thread stopped by an unexpected error");
    }
  });
}

}  // namespace nasd::util
