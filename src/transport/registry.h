// The transports safs-sim knows, by name.
#pragma once

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "transport/params.h"
#include "transport/transport.h"

namespace safs {

struct TransportInfo {
  std::string_view name;
  std::string_view summary;
  std::vector<ParamSpec> params;
  std::function<std::unique_ptr<Transport>(TransportEnv&, const TransportParams&)> make;
};

const std::vector<TransportInfo>& all_transports();
const TransportInfo* find_transport(std::string_view name);

}  // namespace safs
