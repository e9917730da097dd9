#include "server/http/civetweb_tls.h"

#include <civetweb.h>
#include <dlfcn.h>

namespace nasd::http {

bool civetweb_tls_usable(std::string* why) {
  if (!mg_check_feature(2)) return *why = "this civetweb was built without TLS", false;
  // The library civetweb itself opens, and the names it needs that OpenSSL 3 renamed.
  void* ssl = ::dlopen("libssl.so", RTLD_LAZY | RTLD_LOCAL);
  if (!ssl) return *why = "civetweb opens libssl.so, which is missing (install libssl-dev)", false;
  const bool old_names = ::dlsym(ssl, "SSL_get_peer_certificate") != nullptr;
  ::dlclose(ssl);
  if (!old_names)
    return *why = "this civetweb looks OpenSSL up by its 1.1 names and libssl.so (OpenSSL 3) has "
                  "no SSL_get_peer_certificate: its TLS would crash the node on the first "
                  "HTTPS request. Terminate TLS in a proxy on the management network, or build "
                  "civetweb with OPENSSL_API_3_0",
           false;
  return true;
}

}  // namespace nasd::http
