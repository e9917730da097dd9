// Test helpers for handing a call to rpc::CallDispatcher::handle() as an event loop would: the
// origin of a client on 127.0.0.1, and the message of an NFSv3 call with AUTH_SYS credentials.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdint>
#include <vector>

#include "server/rpc/call_dispatcher.h"
#include "tests/rpc/rpc_test_client.h"

namespace nasd::rpc::testing {

inline CallOrigin loopback_origin(uint16_t port) {
  CallOrigin origin;
  auto* in = reinterpret_cast<sockaddr_in*>(&origin.peer);
  in->sin_family = AF_INET;
  in->sin_port = htons(port);
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  origin.peer_len = sizeof(sockaddr_in);
  return origin;
}

inline std::vector<uint8_t> nfs3_call(uint32_t xid, uint32_t proc, uint32_t uid, uint32_t gid,
                                      std::vector<uint8_t> args) {
  CallSpec spec;
  spec.xid = xid;
  spec.prog = 100003;
  spec.vers = 3;
  spec.proc = proc;
  spec.cred_flavor = 1;  // AUTH_SYS
  AuthSysParams cred;
  cred.uid = uid;
  cred.gid = gid;
  spec.cred_body = auth_sys_body(cred);
  spec.args = std::move(args);
  return make_call(spec);
}

}  // namespace nasd::rpc::testing
