// libFuzzer target for the control-message decoder: any bytes must decode,
// ask for more, or be rejected with a reason, never read out of bounds; and
// whatever decodes must re-encode to the same frame.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "runtime/wire.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace safs::runtime::wire;
  std::span<const std::uint8_t> input(data, size);
  while (!input.empty()) {
    const DecodeResult result = decode(input);
    if (result.status != DecodeStatus::kMessage) {
      if (result.status == DecodeStatus::kInvalid && result.error.empty()) std::abort();
      break;
    }
    if (result.consumed_bytes == 0 || result.consumed_bytes > input.size()) std::abort();
    std::vector<std::uint8_t> again;
    encode(result.message, again);
    const auto frame = input.first(result.consumed_bytes);
    if (!std::equal(frame.begin(), frame.end(), again.begin(), again.end())) std::abort();
    input = input.subspan(result.consumed_bytes);
  }
  return 0;
}
