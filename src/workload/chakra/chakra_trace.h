// One rank's Chakra execution trace as plain values: what safs-sim reads of
// each node (MLCommons Chakra's Node message, et_def.proto here), with no
// protobuf type in sight, so that the graph builder and its tests need no
// protobuf. chakra_file.h reads and writes the files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace safs {

// Chakra's NodeType values.
enum class ChakraNodeType : int {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kCompute = 4,
  kSend = 5,
  kRecv = 6,
  kCollective = 7,
};

// Chakra's CollectiveCommType values (a collective node's comm_type).
enum class ChakraCollective : int {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};

struct ChakraNode {
  std::uint64_t id = 0;
  std::string name;
  int type = 0;  // a ChakraNodeType value, kept raw so that an unknown one can be reported
  std::vector<std::uint64_t> ctrl_deps;
  std::vector<std::uint64_t> data_deps;
  std::uint64_t duration_micros = 0;
  // Attributes, named as Chakra's converters and feeder name them.
  std::optional<std::int64_t> comm_type;  // collective: a ChakraCollective value
  std::optional<std::int64_t> comm_size;  // bytes
  std::optional<std::int64_t> comm_src;   // recv: the sending rank
  std::optional<std::int64_t> comm_dst;   // send: the receiving rank
  std::optional<std::int64_t> comm_tag;   // send/recv: pairs with the same tag match
};

struct ChakraRank {
  std::string path;               // for messages
  std::string version;            // GlobalMetadata.version, or its "schema" attribute
  std::vector<ChakraNode> nodes;  // in file order
};

}  // namespace safs
