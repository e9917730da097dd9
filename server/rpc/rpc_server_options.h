// Reading RpcServerOptions from the [node] section of nasd.conf. The section also carries
// keys of other rooms (name, data_dir, admin_socket, ...), so unknown keys are left to the
// daemon to report.
#pragma once

#include "server/rpc/rpc_server.h"
#include "util/config.h"

namespace nasd::rpc {

// listen, nfs_port, mount_port, udp, workers, threads, rpcbind, max_record, max_connections,
// max_connections_per_client, idle_timeout (seconds). Throws ConfigError
// for malformed values (a port out of range, an unknown rpcbind mode, ...).
RpcServerOptions rpc_server_options_from_config(const ConfigSection& node);

}  // namespace nasd::rpc
