// libFuzzer target for the authenticated handshake: the responder side of a
// control channel (control_channel.h) reads whatever an initiator sends.
// The first input byte picks the attacker: 0-127 an outsider whose bytes go
// in raw (it must never be authenticated: it cannot forge the proof), 128-255
// an insider that completes the handshake with the job key and then seals
// the rest of the input, split into frames, so the checks on opened frames
// are fuzzed too. Neither may crash, read out of bounds, or let a handshake
// frame through after authentication.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <variant>
#include <vector>

#include "runtime/control_channel.h"
#include "runtime/security.h"
#include "runtime/wire.h"

namespace {

using namespace safs::runtime;

std::vector<std::uint8_t> frame(const wire::Message& message) {
  std::vector<std::uint8_t> bytes;
  wire::encode(message, bytes);
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool insider = data[0] >= 128;
  std::span<const std::uint8_t> input(data + 1, size - 1);
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) != 0) return 0;
  const ChannelKeys keys{};
  wire::Hello initiator;
  initiator.listen_port = 1;
  wire::Hello responder;
  responder.listen_port = 2;
  ControlChannel channel(fds[0], keys, responder, initiator);  // owns fds[0]
  std::vector<std::uint8_t> bytes;
  if (insider) {
    SessionCrypto crypto(keys.job_key, SessionCrypto::Role::kInitiator, frame(initiator),
                         frame(responder));
    bytes = frame(wire::Auth{crypto.own_proof(), {}});
    // Each length byte, then that many bytes of plain frame to seal.
    while (!input.empty()) {
      const std::size_t length = std::min<std::size_t>(input[0], input.size() - 1);
      wire::Sealed sealed;
      crypto.seal(input.subspan(1, length), sealed.bytes);
      wire::encode(sealed, bytes);
      input = input.subspan(1 + length);
    }
  } else {
    bytes.assign(input.begin(), input.end());
  }
  channel.feed(bytes);
  std::vector<wire::Message> messages;
  channel.read(messages, 1 << 16);
  if (!insider && channel.authenticated()) std::abort();  // a forged proof passed
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const bool handshake = std::holds_alternative<wire::Hello>(messages[i]) ||
                           std::holds_alternative<wire::Sealed>(messages[i]) ||
                           (i > 0 && std::holds_alternative<wire::Auth>(messages[i]));
    if (handshake) std::abort();
  }
  close(fds[1]);
  return 0;
}
