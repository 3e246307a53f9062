// chakra_file.h in a build without protobuf: every read says so.
#include <stdexcept>

#include "workload/chakra/chakra_file.h"

namespace safs {

namespace {

constexpr const char* kNoChakra =
    "this build of safs-sim lacks Chakra support (it was built without protobuf; install "
    "libprotobuf-dev and protobuf-compiler, see scripts/setup.sh, and rebuild)";

}  // namespace

bool chakra_supported() { return false; }

ChakraRank load_chakra_rank(const std::string& path) {
  throw std::invalid_argument(path + ": " + kNoChakra);
}

void write_chakra_rank(const ChakraRank&, const std::string& path) {
  throw std::runtime_error(path + ": " + kNoChakra);
}

}  // namespace safs
