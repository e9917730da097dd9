#include "cluster/address/capabilities.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace nasd::cluster::address {

std::string missing_address_capabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, data) != 0) return "CAP_NET_ADMIN, CAP_NET_RAW (capget failed)";
  const auto has = [&](int cap) { return (data[cap / 32].effective >> (cap % 32)) & 1u; };
  std::string missing;
  if (!has(CAP_NET_ADMIN)) missing = "CAP_NET_ADMIN";
  if (!has(CAP_NET_RAW)) missing += std::string(missing.empty() ? "" : ", ") + "CAP_NET_RAW";
  return missing;
}

}  // namespace nasd::cluster::address
