#include "cluster/address/packet_socket.h"

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nasd::cluster::address {
namespace {

std::string errno_text(int e) {
  std::string text = std::strerror(e);
  if (e == EPERM || e == EACCES) text += " (nasd needs CAP_NET_RAW to send ARP and neighbour advertisements)";
  return text;
}

}  // namespace

bool link_info(const std::string& interface, LinkInfo* out, std::string* error) {
  if (!valid_interface_name(interface)) {
    *error = "interface '" + interface + "' is not an interface name";
    return false;
  }
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  ifreq r{};
  std::memcpy(r.ifr_name, interface.c_str(), interface.size());
  const bool ok = ioctl(fd, SIOCGIFHWADDR, &r) == 0;
  const int e = errno;
  close(fd);
  if (!ok) {
    *error = e == ENODEV ? "interface " + interface + " does not exist on this host"
                         : "interface " + interface + ": " + std::strerror(e);
    return false;
  }
  out->ethernet = r.ifr_hwaddr.sa_family == ARPHRD_ETHER;
  std::memcpy(out->mac.data(), r.ifr_hwaddr.sa_data, 6);
  return true;
}

PacketSocket::~PacketSocket() {
  if (fd_ >= 0) close(fd_);
}

bool PacketSocket::open(unsigned ifindex, uint16_t ethertype, std::string* error) {
  fd_ = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ethertype));
  if (fd_ < 0) {
    *error = "packet socket: " + errno_text(errno);
    return false;
  }
  ifindex_ = ifindex;
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ethertype);
  sll.sll_ifindex = static_cast<int>(ifindex);
  if (bind(fd_, reinterpret_cast<sockaddr*>(&sll), sizeof sll) != 0) {
    *error = "packet socket bind: " + errno_text(errno);
    return false;
  }
  return true;
}

bool PacketSocket::send(const std::vector<uint8_t>& frame, std::string* error) {
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_ifindex = static_cast<int>(ifindex_);
  sll.sll_halen = 6;
  std::memcpy(sll.sll_addr, frame.data(), 6);
  if (sendto(fd_, frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&sll), sizeof sll) !=
      static_cast<ssize_t>(frame.size())) {
    *error = "sending a frame: " + errno_text(errno);
    return false;
  }
  return true;
}

bool PacketSocket::join_group(const Mac& group, std::string* error) {
  packet_mreq m{};
  m.mr_ifindex = static_cast<int>(ifindex_);
  m.mr_type = PACKET_MR_MULTICAST;
  m.mr_alen = 6;
  std::memcpy(m.mr_address, group.data(), 6);
  if (setsockopt(fd_, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &m, sizeof m) != 0) {
    *error = "joining a multicast group: " + errno_text(errno);
    return false;
  }
  return true;
}

ssize_t PacketSocket::receive(uint8_t* buf, size_t n, std::chrono::milliseconds timeout) {
  pollfd p{fd_, POLLIN, 0};
  const int r = poll(&p, 1, static_cast<int>(timeout.count()));
  if (r <= 0) return r == 0 ? 0 : -1;
  const ssize_t got = recv(fd_, buf, n, MSG_DONTWAIT);
  if (got < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
  return got;
}

}  // namespace nasd::cluster::address
