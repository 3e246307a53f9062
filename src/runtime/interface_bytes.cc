#include "runtime/interface_bytes.h"

#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstring>

namespace safs::runtime {
namespace {

bool same_address(const sockaddr* a, const sockaddr_storage& b) {
  if (a == nullptr || a->sa_family != b.ss_family) return false;
  if (a->sa_family == AF_INET) {
    return std::memcmp(&reinterpret_cast<const sockaddr_in*>(a)->sin_addr,
                       &reinterpret_cast<const sockaddr_in*>(&b)->sin_addr, sizeof(in_addr)) == 0;
  }
  if (a->sa_family == AF_INET6) {
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(&b)->sin6_addr,
                       sizeof(in6_addr)) == 0;
  }
  return false;
}

}  // namespace

bool InterfaceBytes::find_by_socket(int fd) {
  sockaddr_storage local{};
  socklen_t length = sizeof local;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) != 0) return false;
  if (local.ss_family == AF_INET6) {  // an IPv4 peer on a dual-stack socket
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(local);
    if (IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr)) {
      sockaddr_in v4{};
      v4.sin_family = AF_INET;
      std::memcpy(&v4.sin_addr, &v6.sin6_addr.s6_addr[12], sizeof v4.sin_addr);
      local = {};
      std::memcpy(&local, &v4, sizeof v4);
    }
  }
  ifaddrs* interfaces = nullptr;
  if (getifaddrs(&interfaces) != 0) return false;
  for (const ifaddrs* i = interfaces; i != nullptr; i = i->ifa_next) {
    if (same_address(i->ifa_addr, local) && i->ifa_name != nullptr) {
      name_ = i->ifa_name;
      break;
    }
  }
  freeifaddrs(interfaces);
  return known();
}

std::optional<std::uint64_t> InterfaceBytes::received() const {
  if (!known()) return std::nullopt;
  // /proc/net/dev is this process's network namespace's (sysfs is the
  // namespace's that mounted it): "  NAME: RX_BYTES RX_PACKETS ..." per line.
  std::FILE* file = std::fopen("/proc/net/dev", "r");
  if (file == nullptr) return std::nullopt;
  std::optional<std::uint64_t> bytes;
  char line[512];
  while (!bytes && std::fgets(line, sizeof line, file) != nullptr) {
    const char* name = line + std::strspn(line, " ");
    const char* colon = std::strchr(name, ':');
    if (colon == nullptr || static_cast<std::size_t>(colon - name) != name_.size() ||
        name_.compare(0, name_.size(), name, name_.size()) != 0) {
      continue;
    }
    unsigned long long rx = 0;
    if (std::sscanf(colon + 1, "%llu", &rx) == 1) bytes = rx;
  }
  std::fclose(file);
  return bytes;
}

}  // namespace safs::runtime
