// Knob tables: an empty section gives exactly the default-constructed struct,
// every knob reaches its own member, and a value survives the trip through
// its unit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "scenario/sections.h"
#include "transport/homa/homa_options.h"
#include "transport/pfabric/pfabric_options.h"
#include "transport/registry.h"
#include "transport/safs/safs_options.h"
#include "transport/window/window_options.h"

namespace safs {
namespace {

// A value of the knob's type, different from `now`, inside its range.
Value another_value(const KeySpec& spec, const Value& now) {
  switch (spec.type) {
    case ValueType::kInteger: {
      const auto v = std::holds_alternative<std::int64_t>(now) ? std::get<std::int64_t>(now) : 0;
      return static_cast<double>(v) + 2 <= spec.max_value
                 ? v + 2
                 : static_cast<std::int64_t>(spec.min_value);
    }
    case ValueType::kFloat: {
      const double v = std::holds_alternative<double>(now) ? std::get<double>(now) : spec.min_value;
      // A whole number, so it survives any unit scale exactly.
      const double other = std::floor((spec.min_value + spec.max_value) / 2);
      return other != v && other >= spec.min_value ? other : spec.max_value;
    }
    case ValueType::kBoolean:
      return !std::get<bool>(now);
    case ValueType::kString:
      return std::get<std::string>(now) == spec.choices.front() ? spec.choices.back()
                                                                : spec.choices.front();
    case ValueType::kHostList:
      return std::vector<std::int64_t>{1, 2};
    case ValueType::kStringList:
      return std::vector<std::string>{"a"};
  }
  return {};
}

template <class Config>
void expect_knobs_bind_their_members(const KnobTable<Config>& table) {
  const Config defaults{};
  const Config from_empty = table.read(MapReader("empty", {}));
  for (const Knob<Config>& k : table.knobs()) {
    SCOPED_TRACE(k.spec.path);
    EXPECT_EQ(k.read(from_empty), k.read(defaults));
    EXPECT_FALSE(k.spec.doc.empty());
    // Setting this key changes this knob's member and no other knob's.
    const Value value = another_value(k.spec, k.read(defaults));
    const Config set = table.read(MapReader("one", {{k.spec.path, value}}));
    EXPECT_EQ(k.read(set), value);
    for (const Knob<Config>& other : table.knobs()) {
      if (&other == &k) continue;
      EXPECT_EQ(other.read(set), other.read(defaults)) << other.spec.path;
    }
  }
}

TEST(Knobs, WindowTransports) {
  expect_knobs_bind_their_members(reno_knobs());
  expect_knobs_bind_their_members(dctcp_knobs());
  expect_knobs_bind_their_members(d2tcp_knobs());
}

TEST(Knobs, Safs) { expect_knobs_bind_their_members(safs_knobs()); }
TEST(Knobs, Homa) { expect_knobs_bind_their_members(homa_knobs()); }
TEST(Knobs, PFabric) { expect_knobs_bind_their_members(pfabric_knobs()); }
TEST(Knobs, SimulationSection) { expect_knobs_bind_their_members(simulation_knobs()); }
TEST(Knobs, TopologySection) { expect_knobs_bind_their_members(topology_knobs()); }
TEST(Knobs, NetworkSection) { expect_knobs_bind_their_members(network_knobs()); }

// The defaults the docs promise, read from the structs.
TEST(Knobs, DefaultsComeFromMemberInitializers) {
  EXPECT_EQ(DctcpOptions{}.window.initial_alpha, kAlphaOne);
  EXPECT_EQ(SafsOptions{}.dctcp.window.initial_alpha, 0u);  // SAFS starts from alpha = 0
  const std::vector<KeySpec> safs = safs_knobs().describe("");
  const auto alpha = std::find_if(safs.begin(), safs.end(),
                                  [](const KeySpec& k) { return k.path == "initial_alpha"; });
  ASSERT_NE(alpha, safs.end());
  EXPECT_EQ(alpha->default_value, Value{0.0});
  const std::vector<KeySpec> rto = reno_knobs().describe("");
  EXPECT_EQ(rto[1].path, "rto_min_us");
  EXPECT_EQ(rto[1].default_value, Value{1000.0});  // WindowConfig::rto_min_ps = 1 ms
}

TEST(Knobs, EveryTransportBuildsFromAnEmptySection) {
  for (const TransportInfo& t : all_transports()) {
    SCOPED_TRACE(std::string(t.name));
    EXPECT_FALSE(t.keys.empty());
    EXPECT_NE(t.configure(MapReader(std::string(t.name), {})), nullptr);
  }
  EXPECT_NE(find_transport("pfabric")->configure(MapReader("p", {}))->queue_factory(), nullptr);
  EXPECT_EQ(find_transport("dctcp")->configure(MapReader("d", {}))->queue_factory(), nullptr);
}

}  // namespace
}  // namespace safs
