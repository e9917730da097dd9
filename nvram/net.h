// Small blocking TCP helpers for the mirror link (loopback or the cluster interconnect).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace nasd::nvram::net {

// "127.0.0.1:7070" -> host and port. False on a malformed address.
bool split_host_port(const std::string& address, std::string* host, uint16_t* port);

// Connected socket (TCP_NODELAY) or -1 with `*error` set.
int connect_tcp(const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
                std::string* error);

// Listening socket bound to host:port (port 0 picks one); `*bound_port` is the real port.
int listen_tcp(const std::string& host, uint16_t port, uint16_t* bound_port, std::string* error);

// Writes all bytes (retrying on EINTR and short writes). False when the peer is gone.
bool write_all(int fd, const void* data, size_t n);

// Waits up to `timeout` for `fd` to become readable. False on timeout or error.
bool wait_readable(int fd, std::chrono::milliseconds timeout);

}  // namespace nasd::nvram::net
