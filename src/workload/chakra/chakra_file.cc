#include "workload/chakra/chakra_file.h"

#include <fstream>
#include <iterator>
#include <stdexcept>

#include "base/input_file.h"
#include "workload/chakra/et_def.pb.h"

namespace safs {

namespace {

namespace pb = ChakraProtoMsg;

// Reads the varint byte count in front of each message (protobuf's base-128
// encoding, at most 32 bits as the feeder's ReadVarint32 takes it).
class MessageStream {
 public:
  MessageStream(const std::string& path, std::string bytes)
      : path_(path), bytes_(std::move(bytes)) {}

  bool at_end() const { return pos_ == bytes_.size(); }
  int index() const { return index_; }

  // The next message's bytes; throws naming the message if the file ends first.
  std::string_view next() {
    const std::size_t start = pos_;
    std::uint64_t size = 0;
    for (int shift = 0;; shift += 7) {
      if (pos_ == bytes_.size()) fail(start, "the file ends inside its size prefix (truncated)");
      if (shift > 28) fail(start, "its size prefix is longer than 5 bytes (not a Chakra trace)");
      const auto byte = static_cast<unsigned char>(bytes_[pos_++]);
      size |= std::uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80u) == 0) break;
    }
    if (size > bytes_.size() - pos_) {
      fail(start, "needs " + std::to_string(size) + " bytes, the file has " +
                      std::to_string(bytes_.size() - pos_) + " left (truncated)");
    }
    const std::string_view message(bytes_.data() + pos_, size);
    pos_ += size;
    ++index_;
    last_start_ = start;
    return message;
  }

  [[noreturn]] void fail_last(const std::string& what) const {
    fail(last_start_, what, index_ - 1);
  }

 private:
  [[noreturn]] void fail(std::size_t offset, const std::string& what) const {
    fail(offset, what, index_);
  }
  [[noreturn]] void fail(std::size_t offset, const std::string& what, int index) const {
    throw std::invalid_argument(path_ + ": message " + std::to_string(index) + " (byte " +
                                std::to_string(offset) + "): " + what);
  }

  std::string path_;
  std::string bytes_;
  std::size_t pos_ = 0;
  std::size_t last_start_ = 0;
  int index_ = 0;
};

// An integer attribute in whichever integer field the writer chose (the
// reference converters use int64 for comm_type and comm_size, its feeder
// int32 for comm_src, comm_dst and comm_tag).
std::optional<std::int64_t> integer_of(const pb::AttributeProto& a) {
  switch (a.value_case()) {
    case pb::AttributeProto::kInt32Val:
      return a.int32_val();
    case pb::AttributeProto::kInt64Val:
      return a.int64_val();
    case pb::AttributeProto::kUint32Val:
      return a.uint32_val();
    case pb::AttributeProto::kUint64Val:
      return static_cast<std::int64_t>(a.uint64_val());
    case pb::AttributeProto::kSint32Val:
      return a.sint32_val();
    case pb::AttributeProto::kSint64Val:
      return a.sint64_val();
    default:
      return std::nullopt;
  }
}

ChakraNode node_of(const pb::Node& n, const MessageStream& in) {
  ChakraNode node;
  node.id = n.id();
  node.name = n.name();
  node.type = n.type();
  node.ctrl_deps.assign(n.ctrl_deps().begin(), n.ctrl_deps().end());
  node.data_deps.assign(n.data_deps().begin(), n.data_deps().end());
  node.duration_micros = n.duration_micros();
  const std::pair<const char*, std::optional<std::int64_t> ChakraNode::*> known[] = {
      {"comm_type", &ChakraNode::comm_type},
      {"comm_size", &ChakraNode::comm_size},
      {"comm_src", &ChakraNode::comm_src},
      {"comm_dst", &ChakraNode::comm_dst},
      {"comm_tag", &ChakraNode::comm_tag}};
  for (const pb::AttributeProto& a : n.attr()) {
    for (const auto& [name, field] : known) {
      if (a.name() != name) continue;
      node.*field = integer_of(a);
      if (!(node.*field)) {
        in.fail_last("node " + std::to_string(n.id()) + ": attribute " + name +
                     " is not an integer");
      }
    }
  }
  return node;
}

pb::AttributeProto attribute(const std::string& name, std::int64_t value) {
  pb::AttributeProto a;
  a.set_name(name);
  // As Chakra's feeder reads them: int64 for type and size, int32 for the rest.
  if (name == "comm_type" || name == "comm_size") {
    a.set_int64_val(value);
  } else {
    a.set_int32_val(static_cast<std::int32_t>(value));
  }
  return a;
}

void put_message(std::string& out, const google::protobuf::MessageLite& message) {
  const std::string bytes = message.SerializeAsString();
  for (std::uint64_t size = bytes.size();; size >>= 7) {
    const auto low = static_cast<unsigned char>(size & 0x7fu);
    if (size < 0x80) {
      out.push_back(static_cast<char>(low));
      break;
    }
    out.push_back(static_cast<char>(low | 0x80u));
  }
  out += bytes;
}

}  // namespace

bool chakra_supported() { return true; }

ChakraRank load_chakra_rank(const std::string& path) {
  // Read whole into memory: bounded at 4 GiB (a rank's trace is megabytes).
  std::ifstream file = open_input_file(path, std::uintmax_t{4} << 30, "a Chakra trace file");
  MessageStream in(path, std::string(std::istreambuf_iterator<char>(file), {}));
  ChakraRank rank;
  rank.path = path;
  if (in.at_end()) throw std::invalid_argument(path + ": empty (no GlobalMetadata message)");
  pb::GlobalMetadata metadata;
  const std::string_view head = in.next();
  if (!metadata.ParseFromArray(head.data(), static_cast<int>(head.size()))) {
    in.fail_last("not a Chakra GlobalMetadata message");
  }
  rank.version = metadata.version();
  for (const pb::AttributeProto& a : metadata.attr()) {
    if (rank.version.empty() && a.name() == "schema") rank.version = a.string_val();
  }
  while (!in.at_end()) {
    const std::string_view bytes = in.next();
    pb::Node node;
    if (!node.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      in.fail_last("not a Chakra Node message");
    }
    rank.nodes.push_back(node_of(node, in));
  }
  return rank;
}

void write_chakra_rank(const ChakraRank& rank, const std::string& path) {
  std::string out;
  pb::GlobalMetadata metadata;
  metadata.set_version(rank.version);
  put_message(out, metadata);
  for (const ChakraNode& n : rank.nodes) {
    pb::Node node;
    node.set_id(n.id);
    node.set_name(n.name);
    node.set_type(static_cast<pb::NodeType>(n.type));
    for (const std::uint64_t d : n.ctrl_deps) node.add_ctrl_deps(d);
    for (const std::uint64_t d : n.data_deps) node.add_data_deps(d);
    node.set_duration_micros(n.duration_micros);
    const std::pair<const char*, const std::optional<std::int64_t>*> attrs[] = {
        {"comm_type", &n.comm_type},
        {"comm_size", &n.comm_size},
        {"comm_src", &n.comm_src},
        {"comm_dst", &n.comm_dst},
        {"comm_tag", &n.comm_tag}};
    for (const auto& [name, value] : attrs) {
      if (*value) *node.add_attr() = attribute(name, **value);
    }
    put_message(out, node);
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << out;
  if (!file.flush()) throw std::runtime_error(path + ": cannot write the trace file");
}

}  // namespace safs
