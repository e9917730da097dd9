#include "cluster/address/netlink_addresses.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/ip.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <initializer_list>
#include <cstring>
#include <ctime>
#include <memory>
#include <vector>

namespace nasd::cluster::address {
namespace {

struct SocketCloser {
  void operator()(mnl_socket* s) const { mnl_socket_close(s); }
};
using Socket = std::unique_ptr<mnl_socket, SocketCloser>;

std::string errno_text(int e) {
  std::string text = std::strerror(e);
  if (e == EPERM || e == EACCES) text += " (nasd needs CAP_NET_ADMIN to change interface addresses)";
  return text;
}

Socket open_socket(std::string* error) {
  Socket s(mnl_socket_open(NETLINK_ROUTE));
  if (!s || mnl_socket_bind(s.get(), 0, MNL_SOCKET_AUTOPID) < 0) {
    *error = "rtnetlink: " + errno_text(errno);
    return nullptr;
  }
  return s;
}

// Sends the request in `buf` and runs the answers through `cb` until the kernel's ack or the
// dump's end. -1 and errno as the kernel answered.
int transact(mnl_socket* s, nlmsghdr* request, mnl_cb_t cb, void* data) {
  const unsigned seq = static_cast<unsigned>(time(nullptr));
  request->nlmsg_seq = seq;
  if (mnl_socket_sendto(s, request, request->nlmsg_len) < 0) return -1;
  const unsigned portid = mnl_socket_get_portid(s);
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  for (;;) {
    const ssize_t n = mnl_socket_recvfrom(s, buf.data(), buf.size());
    if (n < 0) return -1;
    const int r = mnl_cb_run(buf.data(), static_cast<size_t>(n), seq, portid, cb, data);
    if (r <= MNL_CB_STOP) return r;
  }
}

struct Dump {
  unsigned ifindex;
  std::vector<AddressOnLink>* out;
};

int address_attribute(const nlattr* attr, void* data) {
  const nlattr** table = static_cast<const nlattr**>(data);
  const int type = mnl_attr_get_type(attr);
  if (mnl_attr_type_valid(attr, IFA_MAX) < 0) return MNL_CB_OK;
  if ((type == IFA_LOCAL || type == IFA_ADDRESS) && mnl_attr_validate(attr, MNL_TYPE_BINARY) < 0)
    return MNL_CB_ERROR;
  table[type] = attr;
  return MNL_CB_OK;
}

int on_address(const nlmsghdr* nlh, void* data) {
  const Dump* d = static_cast<const Dump*>(data);
  const auto* ifa = static_cast<const ifaddrmsg*>(mnl_nlmsg_get_payload(nlh));
  if (ifa->ifa_index != d->ifindex || (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6))
    return MNL_CB_OK;
  const nlattr* table[IFA_MAX + 1] = {};
  if (mnl_attr_parse(nlh, sizeof(*ifa), address_attribute, table) < 0) return MNL_CB_ERROR;
  const nlattr* a = ifa->ifa_family == AF_INET && table[IFA_LOCAL] ? table[IFA_LOCAL] : table[IFA_ADDRESS];
  const size_t len = ifa->ifa_family == AF_INET ? 4 : 16;
  if (!a || mnl_attr_get_payload_len(a) != len) return MNL_CB_OK;
  AddressOnLink o;
  o.family = ifa->ifa_family;
  o.prefix = ifa->ifa_prefixlen;
  std::memcpy(o.bytes.data(), mnl_attr_get_payload(a), len);
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(o.family, o.bytes.data(), text, sizeof text);
  o.text = std::string(text) + "/" + std::to_string(o.prefix);
  d->out->push_back(o);
  return MNL_CB_OK;
}

nlmsghdr* address_request(char* buf, uint16_t type, uint16_t flags, unsigned ifindex, const InterfaceAddress& a) {
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf);
  nlh->nlmsg_type = type;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
  auto* ifa = static_cast<ifaddrmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifaddrmsg)));
  ifa->ifa_family = static_cast<uint8_t>(a.family);
  ifa->ifa_prefixlen = static_cast<uint8_t>(a.prefix);
  // The kernel refuses 127/8 with a global scope (as `ip` knows, which gives it scope host).
  ifa->ifa_scope = a.family == AF_INET && a.bytes[0] == 127 ? RT_SCOPE_HOST : RT_SCOPE_UNIVERSE;
  ifa->ifa_index = ifindex;
  mnl_attr_put(nlh, IFA_LOCAL, a.length(), a.bytes.data());
  mnl_attr_put(nlh, IFA_ADDRESS, a.length(), a.bytes.data());
  return nlh;
}

}  // namespace

unsigned interface_index(const std::string& name, std::string* error) {
  const unsigned index = valid_interface_name(name) ? if_nametoindex(name.c_str()) : 0;
  if (index == 0) *error = "interface " + name + " does not exist on this host";
  return index;
}

bool list_addresses(unsigned ifindex, std::vector<AddressOnLink>* out, std::string* error) {
  Socket s = open_socket(error);
  if (!s) return false;
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  nlh->nlmsg_type = RTM_GETADDR;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  auto* ifa = static_cast<ifaddrmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifaddrmsg)));
  ifa->ifa_family = AF_UNSPEC;
  out->clear();
  Dump d{ifindex, out};
  if (transact(s.get(), nlh, on_address, &d) < 0) {
    *error = "listing interface addresses: " + errno_text(errno);
    return false;
  }
  return true;
}

namespace {

// One RTM_NEWADDR or RTM_DELADDR for `a`, `extra` adding attributes; an answer of `harmless`
// (the address already there, or already gone) counts as done.
bool change_address(uint16_t type, uint16_t flags, unsigned ifindex, const InterfaceAddress& a,
                    const std::function<void(nlmsghdr*)>& extra, std::initializer_list<int> harmless,
                    const std::string& what, std::string* error) {
  Socket s = open_socket(error);
  if (!s) return false;
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* nlh = address_request(buf.data(), type, flags, ifindex, a);
  extra(nlh);
  if (transact(s.get(), nlh, nullptr, nullptr) < 0 &&
      std::find(harmless.begin(), harmless.end(), errno) == harmless.end()) {
    *error = what + " " + a.describe() + ": " + errno_text(errno);
    return false;
  }
  return true;
}

}  // namespace

bool add_address(unsigned ifindex, const InterfaceAddress& a, std::string* error) {
  const auto extra = [&a](nlmsghdr* nlh) {
    if (a.family == AF_INET6) {
      mnl_attr_put_u32(nlh, IFA_FLAGS, IFA_F_NODAD);
      return;
    }
    std::array<uint8_t, 4> broadcast{};
    for (size_t i = 0; i < 4; ++i) {
      const int bits = a.prefix - static_cast<int>(i) * 8;
      const uint8_t mask = bits >= 8 ? 0xff : bits <= 0 ? 0 : static_cast<uint8_t>(0xff << (8 - bits));
      broadcast[i] = static_cast<uint8_t>(a.bytes[i] | ~mask);
    }
    if (a.prefix < 31) mnl_attr_put(nlh, IFA_BROADCAST, 4, broadcast.data());
  };
  return change_address(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, ifindex, a, extra, {EEXIST}, "adding", error);
}

bool promote_secondaries(unsigned ifindex, std::string* error) {
  Socket s = open_socket(error);
  if (!s) return false;
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  nlh->nlmsg_type = RTM_SETLINK;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  auto* ifi = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = static_cast<int>(ifindex);
  nlattr* spec = mnl_attr_nest_start(nlh, IFLA_AF_SPEC);
  nlattr* inet = mnl_attr_nest_start(nlh, AF_INET);
  nlattr* conf = mnl_attr_nest_start(nlh, IFLA_INET_CONF);
  mnl_attr_put_u32(nlh, IPV4_DEVCONF_PROMOTE_SECONDARIES, 1);
  mnl_attr_nest_end(nlh, conf);
  mnl_attr_nest_end(nlh, inet);
  mnl_attr_nest_end(nlh, spec);
  if (transact(s.get(), nlh, nullptr, nullptr) < 0) {
    *error = "turning promote_secondaries on: " + errno_text(errno);
    return false;
  }
  return true;
}

bool remove_address(unsigned ifindex, const InterfaceAddress& a, std::string* error) {
  return change_address(RTM_DELADDR, 0, ifindex, a, [](nlmsghdr*) {}, {EADDRNOTAVAIL, ENODEV}, "removing", error);
}

}  // namespace nasd::cluster::address
