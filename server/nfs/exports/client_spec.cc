#include "server/nfs/exports/client_spec.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstring>

#include "util/config.h"

namespace nasd::nfs {
namespace {

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  throw ConfigError("export client '" + text + "': " + why);
}

int parse_prefix(const std::string& text, const std::string& digits, int max_bits) {
  if (digits.empty() || digits.size() > 3 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    bad(text, "prefix length must be a number");
  int bits = std::stoi(digits);
  if (bits > max_bits) bad(text, "prefix longer than " + std::to_string(max_bits) + " bits");
  return bits;
}

}  // namespace

ClientSpec ClientSpec::parse(const std::string& text) {
  ClientSpec spec;
  spec.text_ = text;
  if (text == "*") {
    spec.any_ = true;
    return spec;
  }
  auto slash = text.find('/');
  std::string host = text.substr(0, slash);
  Network net;
  if (inet_pton(AF_INET, host.c_str(), net.addr.data()) == 1) {
    net.family = AF_INET;
    net.prefix_bits = 32;
  } else if (inet_pton(AF_INET6, host.c_str(), net.addr.data()) == 1) {
    net.family = AF_INET6;
    net.prefix_bits = 128;
  }
  if (net.family != 0) {
    if (slash != std::string::npos)
      net.prefix_bits = parse_prefix(text, text.substr(slash + 1), net.prefix_bits);
    spec.networks_.push_back(net);
    return spec;
  }
  if (slash != std::string::npos) bad(text, "a prefix length needs a numeric address");
  if (host.empty()) bad(text, "empty client");

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0) bad(text, std::string("not an address, prefix or resolvable host: ") + gai_strerror(rc));
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    Network n;
    n.family = ai->ai_family;
    if (ai->ai_family == AF_INET) {
      std::memcpy(n.addr.data(), &reinterpret_cast<sockaddr_in*>(ai->ai_addr)->sin_addr, 4);
      n.prefix_bits = 32;
    } else if (ai->ai_family == AF_INET6) {
      std::memcpy(n.addr.data(), &reinterpret_cast<sockaddr_in6*>(ai->ai_addr)->sin6_addr, 16);
      n.prefix_bits = 128;
    } else {
      continue;
    }
    spec.networks_.push_back(n);
  }
  freeaddrinfo(res);
  if (spec.networks_.empty()) bad(text, "host has no IPv4 or IPv6 address");
  return spec;
}

bool ClientSpec::network_contains(const Network& net, int family, const uint8_t* addr) {
  if (net.family != family) return false;
  int full_bytes = net.prefix_bits / 8;
  if (std::memcmp(net.addr.data(), addr, full_bytes) != 0) return false;
  int rest_bits = net.prefix_bits % 8;
  if (rest_bits == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest_bits));
  return (net.addr[full_bytes] & mask) == (addr[full_bytes] & mask);
}

bool ClientSpec::matches(const sockaddr_storage& peer) const {
  if (any_) return true;
  int family = peer.ss_family;
  const uint8_t* addr = nullptr;
  if (family == AF_INET) {
    addr = reinterpret_cast<const uint8_t*>(&reinterpret_cast<const sockaddr_in&>(peer).sin_addr);
  } else if (family == AF_INET6) {
    const in6_addr& a6 = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
    addr = a6.s6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a6)) {
      family = AF_INET;
      addr += 12;
    }
  } else {
    return false;
  }
  for (const Network& net : networks_)
    if (network_contains(net, family, addr)) return true;
  return false;
}

}  // namespace nasd::nfs
