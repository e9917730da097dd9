// Whether the civetweb this node runs can speak TLS without crashing. civetweb loads OpenSSL at
// run time (dlopen of libssl.so) and looks its functions up by name; Debian's civetweb 1.15 is
// built for the OpenSSL 1.1 names and, on a system with OpenSSL 3 (libssl.so.3), finds no
// `SSL_get_peer_certificate` (renamed SSL_get1_peer_certificate) and calls a null pointer after
// the first handshake: the whole node dies (seen: a 20-line civetweb program exits with
// SIGSEGV on its first HTTPS request). The listener then refuses to start with a certificate
// configured rather than crash, or fall back to plain HTTP.
#pragma once

#include <string>

namespace nasd::http {

// True when civetweb's TLS can be used; else false and *why (for the log).
bool civetweb_tls_usable(std::string* why);

}  // namespace nasd::http
