// The transports safs-sim knows, by name. Each entry owns its
// [transport.NAME] keys (a knob table over its options struct) and builds
// the transport from a section of settings read through those knobs.
#pragma once

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "net/network.h"
#include "options/knob.h"
#include "transport/transport.h"

namespace safs {

// A transport with its options read: what Experiment builds from.
class TransportSetup {
 public:
  virtual ~TransportSetup() = default;
  // The switch queue discipline the transport needs (pFabric's), or null for
  // the default strict-priority queue. Used for every port when the network
  // is built, before make().
  virtual QueueFactory queue_factory() const { return nullptr; }
  virtual std::unique_ptr<Transport> make(TransportEnv& env) const = 0;
};

struct TransportInfo {
  std::string_view name;
  std::string_view summary;
  std::vector<KeySpec> keys;  // [transport.NAME], paths relative to the section
  std::function<std::unique_ptr<TransportSetup>(const SectionReader&)> configure;
};

// An entry whose options are an `Options` struct read through `knobs`.
template <class Options>
using MakeTransport = std::function<std::unique_ptr<Transport>(TransportEnv&, const Options&)>;
template <class Options>
using MakeQueue = std::function<std::unique_ptr<QueueDiscipline>(const QueueSite&, const Options&)>;

// An entry whose options are an `Options` struct read through `knobs`.
template <class Options>
TransportInfo transport_entry(std::string_view name, std::string_view summary,
                              KnobTable<Options> knobs, MakeTransport<Options> make,
                              MakeQueue<Options> queue = {}) {
  class Setup final : public TransportSetup {
   public:
    Setup(Options options, MakeTransport<Options> m, MakeQueue<Options> q)
        : options_(std::move(options)), make_(std::move(m)), queue_(std::move(q)) {}
    QueueFactory queue_factory() const override {
      if (!queue_) return nullptr;
      return [this](const QueueSite& site) { return queue_(site, options_); };
    }
    std::unique_ptr<Transport> make(TransportEnv& env) const override {
      return make_(env, options_);
    }

   private:
    Options options_;
    MakeTransport<Options> make_;
    MakeQueue<Options> queue_;
  };
  std::vector<KeySpec> keys = knobs.describe("");  // with the table's defaults
  return {name, summary, std::move(keys),
          [knobs = std::move(knobs), make,
           queue](const SectionReader& section) -> std::unique_ptr<TransportSetup> {
            return std::make_unique<Setup>(knobs.read(section), make, queue);
          }};
}

const std::vector<TransportInfo>& all_transports();
const TransportInfo* find_transport(std::string_view name);

}  // namespace safs
