// libFuzzer target for the authenticated handshake: the responder side of a
// control channel (control_channel.h) reads whatever an initiator sends.
// The first input byte picks the attacker: 0-127 an outsider whose bytes go
// in raw (it must never be authenticated: it cannot forge the proof), 128-191
// an insider that completes the handshake with the job key and then seals
// the rest of the input, split into frames, so the checks on opened frames
// are fuzzed too, and 192-255 an insider that claims a member of the
// responder's roster without that member's key (its signature is the next
// 64 input bytes: it must never be authenticated). None may crash, read out
// of bounds, or let a handshake frame through after authentication.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
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
  const bool claims_member = data[0] >= 192;
  std::span<const std::uint8_t> input(data + 1, size - 1);
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) != 0) return 0;
  ChannelKeys keys{};
  wire::Hello initiator;
  initiator.listen_port = 1;
  if (claims_member) {
    std::array<std::uint8_t, kMemberSeedBytes> seed{};
    keys.roster["m"] = {member_key_from_seed("m", seed).public_key, ""};
    initiator.member = "m";
  }
  wire::Hello responder;
  responder.listen_port = 2;
  ControlChannel channel(fds[0], keys, responder, initiator);  // owns fds[0]
  std::vector<std::uint8_t> bytes;
  if (insider) {
    SessionCrypto crypto(keys.job_key, SessionCrypto::Role::kInitiator, frame(initiator),
                         frame(responder));
    wire::Auth auth{crypto.own_proof(), {}};
    if (claims_member) {  // a guessed signature
      const std::size_t guessed = std::min(input.size(), auth.signature.size());
      std::copy_n(input.begin(), guessed, auth.signature.begin());
      input = input.subspan(guessed);
    }
    bytes = frame(auth);
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
  // A forged proof, or a member's signature without its key, passed.
  if ((!insider || claims_member) && channel.authenticated()) std::abort();
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const bool handshake = std::holds_alternative<wire::Hello>(messages[i]) ||
                           std::holds_alternative<wire::Sealed>(messages[i]) ||
                           (i > 0 && std::holds_alternative<wire::Auth>(messages[i]));
    if (handshake) std::abort();
  }
  close(fds[1]);
  return 0;
}
