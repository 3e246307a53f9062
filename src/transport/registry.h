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
  // The switch queue discipline the transport needs (pFabric's), or empty for
  // the default strict-priority queue. Called for every port when the network
  // is built, before make().
  std::function<std::unique_ptr<QueueDiscipline>(const QueueSite&, const TransportParams&)>
      queue_factory;
};

const std::vector<TransportInfo>& all_transports();
const TransportInfo* find_transport(std::string_view name);

}  // namespace safs
