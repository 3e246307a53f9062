// What a network interface has received, all traffic together (the
// kernel's counter): what the receiver's downlink carried, its own flows and
// anyone else's. The receiver's shortfall response compares it with the
// downlink's rate to tell someone else filling the downlink from senders
// that cannot go faster (ShortfallResponse).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace safs::runtime {

class InterfaceBytes {
 public:
  // Finds the interface holding the local address of connected socket `fd`
  // (getifaddrs); false, and unchanged, when none does.
  bool find_by_socket(int fd);
  bool known() const { return !name_.empty(); }
  const std::string& name() const { return name_; }
  // Its received-bytes counter (/proc/net/dev); nullopt when unknown or
  // unreadable.
  std::optional<std::uint64_t> received() const;

 private:
  std::string name_;
};

}  // namespace safs::runtime
