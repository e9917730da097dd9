// Does io_uring's zero-copy send (IORING_OP_SENDMSG_ZC) pay for 1 MiB READ replies on this
// machine's loopback? Sends `total` MiB over a loopback TCP connection in 1 MiB messages made
// of 256 scattered 4 KiB pieces (a READ reply from cache blocks), three ways:
//   copy     -- the pieces copied into one buffer first, then IORING_OP_SENDMSG (what READ did
//               before replies were sent from cache blocks);
//   iovec    -- IORING_OP_SENDMSG with the 256 pieces as an iovec (what nasd does now);
//   zc       -- IORING_OP_SENDMSG_ZC with the same iovec (the pages are pinned, not copied; the
//               buffer may be reused only after the notification CQE).
// A receiver thread reads and discards, as a client would. Prints MB/s and the process's CPU
// (user+system, both threads: loopback charges the receive path to the sender) per MiB.
// Build and run: bench/send_zc_probe.sh [MiB].
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

// Newer than the liburing 2.3 headers (kernel 6.2+): ask the kernel to say when a zero-copy
// send fell back to copying.
#ifndef IORING_SEND_ZC_REPORT_USAGE
#define IORING_SEND_ZC_REPORT_USAGE (1U << 3)
#endif
#ifndef IORING_NOTIF_USAGE_ZC_COPIED
#define IORING_NOTIF_USAGE_ZC_COPIED (1U << 31)
#endif

namespace {

constexpr size_t kPiece = 4096, kPieces = 256, kMessage = kPiece * kPieces;

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

void connected_pair(int* client, int* server) {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(l, 1) != 0 ||
      getsockname(l, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    perror("listen");
    exit(1);
  }
  *client = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(*client, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    perror("connect");
    exit(1);
  }
  *server = accept(l, nullptr, nullptr);
  close(l);
}

int run(const std::string& mode, size_t total_mib, std::vector<uint8_t>& arena) {
  const size_t windows = arena.size() / (2 * kMessage);  // messages' worth of distinct pieces
  int rx, tx;
  connected_pair(&rx, &tx);
  std::thread reader([rx, total = total_mib * kMessage] {
    std::vector<uint8_t> buf(256 << 10);
    size_t got = 0;
    while (got < total) {
      ssize_t n = recv(rx, buf.data(), buf.size(), 0);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
  });
  io_uring ring;
  if (io_uring_queue_init(64, &ring, 0) != 0) {
    perror("io_uring_queue_init");
    exit(1);
  }
  // Scattered pieces: every other 4 KiB of the arena, as cache blocks would lie; each message
  // takes the next window of the arena, so a large arena sends from pages not touched lately
  // (as a cache of hundreds of MiB does).
  std::vector<iovec> iov(kPieces);
  std::vector<uint8_t> flat(kMessage);
  iovec flat_iov{flat.data(), flat.size()};
  const double cpu0 = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  size_t zc_fallbacks = 0;
  for (size_t m = 0; m < total_mib; m++) {
    uint8_t* window = arena.data() + (m % windows) * 2 * kMessage;
    for (size_t i = 0; i < kPieces; i++) iov[i] = {window + 2 * i * kPiece, kPiece};
    msghdr msg{};
    if (mode == "copy") {
      for (size_t i = 0; i < kPieces; i++) std::memcpy(flat.data() + i * kPiece, iov[i].iov_base, kPiece);
      msg.msg_iov = &flat_iov;
      msg.msg_iovlen = 1;
    } else {
      msg.msg_iov = iov.data();
      msg.msg_iovlen = iov.size();
    }
    size_t sent = 0;
    while (sent < kMessage) {
      // A short send resumes where it stopped (rebuild the iovec past the sent bytes).
      std::vector<iovec> rest;
      size_t skip = sent;
      for (size_t i = 0; i < msg.msg_iovlen; i++) {
        iovec v = msg.msg_iov[i];
        if (skip >= v.iov_len) {
          skip -= v.iov_len;
          continue;
        }
        rest.push_back({static_cast<uint8_t*>(v.iov_base) + skip, v.iov_len - skip});
        skip = 0;
      }
      msghdr part{};
      part.msg_iov = rest.data();
      part.msg_iovlen = rest.size();
      io_uring_sqe* sqe = io_uring_get_sqe(&ring);
      if (mode == "zc") {
        io_uring_prep_sendmsg_zc(sqe, tx, &part, 0);
        sqe->ioprio |= IORING_SEND_ZC_REPORT_USAGE;
      }
      else {
        io_uring_prep_sendmsg(sqe, tx, &part, 0);
      }
      io_uring_submit(&ring);
      // zc: the send's CQE (with IORING_CQE_F_MORE) and later its notification.
      bool result_seen = false, notif_pending = false;
      while (!result_seen || notif_pending) {
        io_uring_cqe* cqe;
        if (io_uring_wait_cqe(&ring, &cqe) != 0) exit(1);
        if (cqe->flags & IORING_CQE_F_NOTIF) {
          notif_pending = false;
          if (static_cast<uint32_t>(cqe->res) & IORING_NOTIF_USAGE_ZC_COPIED) zc_fallbacks++;
        } else {
          result_seen = true;
          if (cqe->res < 0) {
            fprintf(stderr, "%s: send failed: %s\n", mode.c_str(), strerror(-cqe->res));
            exit(1);
          }
          sent += static_cast<size_t>(cqe->res);
          notif_pending = (cqe->flags & IORING_CQE_F_MORE) != 0;
        }
        io_uring_cqe_seen(&ring, cqe);
      }
    }
  }
  shutdown(tx, SHUT_WR);
  reader.join();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_seconds() - cpu0;
  printf("%-5s %6zu MiB  %8.0f MB/s  %6.3f ms CPU per MiB%s\n", mode.c_str(), total_mib,
         total_mib * kMessage / secs / 1e6, cpu * 1e3 / total_mib,
         mode == "zc" && zc_fallbacks ? "  (kernel copied some zc sends)" : "");
  io_uring_queue_exit(&ring);
  close(rx);
  close(tx);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  size_t total = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 2048;
  // Arena sizes: 2 MiB (the pieces stay hot) and 512 MiB (a cache's worth: cold pages).
  for (size_t arena_mib : {size_t{2}, size_t{512}}) {
    std::vector<uint8_t> arena(arena_mib << 20);
    for (size_t i = 0; i < arena.size(); i++) arena[i] = static_cast<uint8_t>(i * 31);
    printf("arena %zu MiB\n", arena_mib);
    for (const char* mode : {"copy", "iovec", "zc", "copy", "iovec", "zc"}) run(mode, total, arena);
  }
  return 0;
}
