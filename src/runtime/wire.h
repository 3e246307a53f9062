// The SAFS control protocol (docs/wire.md): length-prefixed binary frames on
// one TCP connection per peer pair, plus the one frame that opens a data
// connection. Pure encoding and decoding, no I/O, so it can be fuzzed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace safs::runtime::wire {

// Version 3: authenticated Hello (nonces, proofs and a member's signature),
// sealed control frames, data connections bound to their own control
// connection and by a per-flow token. Versions 1 and 2 are refused.
inline constexpr std::uint16_t kVersion = 3;
inline constexpr std::uint32_t kMagic = 0x53414653;  // "SAFS": first field of every Hello
inline constexpr std::size_t kHeaderBytes = 8;       // version u16, type u16, body length u32
// No control message comes close: the largest is an Error with its reason.
inline constexpr std::uint32_t kMaxBodyBytes = 512;
inline constexpr std::size_t kMaxReasonBytes = 256;
// Fixed-size byte fields of the handshake and of DataOpen.
inline constexpr std::size_t kNonceBytes = 32;      // fresh random per Hello
inline constexpr std::size_t kProofBytes = 32;      // HMAC-SHA-512-256 (crypto_auth)
inline constexpr std::size_t kTokenBytes = 32;      // HMAC-SHA-512-256 (crypto_auth)
inline constexpr std::size_t kSignatureBytes = 64;  // Ed25519 (crypto_sign)
// A member's name: 1-64 of [A-Za-z0-9._-] (no ':', so never an address).
inline constexpr std::size_t kMaxMemberNameBytes = 64;
// A sealed frame is one inner frame, encrypted, plus its 16-byte Poly1305 tag.
inline constexpr std::size_t kSealTagBytes = 16;
inline constexpr std::uint32_t kMaxSealedBodyBytes =
    static_cast<std::uint32_t>(kHeaderBytes + kMaxBodyBytes + kSealTagBytes);
using Nonce = std::array<std::uint8_t, kNonceBytes>;
using Proof = std::array<std::uint8_t, kProofBytes>;
using Token = std::array<std::uint8_t, kTokenBytes>;
using Signature = std::array<std::uint8_t, kSignatureBytes>;
// slack_ns of a flow that has no deadline (background).
inline constexpr std::int64_t kNoDeadline = std::numeric_limits<std::int64_t>::max();

enum class Type : std::uint16_t {
  kHello = 1,
  kAnnounce = 2,
  kUpdate = 3,
  kGrant = 4,
  kDone = 5,
  kError = 6,
  kDataOpen = 7,
  kAuth = 8,
  kSealed = 9,
  kReport = 10,
  kPlan = 11,
  kPlanWarning = 12,
};

// Capability bits a Hello advertises.
inline constexpr std::uint32_t kCapKernelPacing = 1u << 0;  // SO_MAX_PACING_RATE works here
inline constexpr std::uint32_t kCapLeases = 1u << 1;        // understands grant leases
// Keeps a data connection open after its flow's last byte and reads the next
// DataOpen on it, so a sender may reuse it for its next flow to this endpoint.
inline constexpr std::uint32_t kCapDataReuse = 1u << 2;
// Reads Reports: a sender whose own uplink limits a flow may say so.
inline constexpr std::uint32_t kCapUplinkReports = 1u << 3;
// Reads Plans: a sender may announce a transfer before it starts.
inline constexpr std::uint32_t kCapPlans = 1u << 4;
// With kCapDataReuse: reads the next flow's DataOpen right behind the last
// byte of the flow before it on a data connection, before that flow's Done
// (it reads each first frame exactly, and keeps a connection with bytes
// waiting whatever its bound on idle ones), so a sender may let flows follow
// one another on one connection (ContentionFallback::one_connection).
inline constexpr std::uint32_t kCapDataFollow = 1u << 5;
// Reads PlanWarnings: a receiver may say that a plan cannot be on time.
inline constexpr std::uint32_t kCapPlanWarnings = 1u << 6;

// First message each way on a control connection.
struct Hello {
  std::uint32_t magic = kMagic;
  std::uint16_t max_version = kVersion;  // highest version the sender speaks
  std::uint32_t capabilities = 0;
  std::uint64_t downlink_bps = 0;  // what this endpoint's receiver allocates
  std::uint16_t listen_port = 0;   // where this endpoint accepts connections
  Nonce nonce{};                   // the challenge: fresh random bytes per connection
  std::string member;              // the job member it speaks for ("" for none)
  bool operator==(const Hello&) const = default;
};

// Sender -> receiver: a new flow. Slack is relative (the receiver adds it to
// its own clock), so hosts need no synchronised clocks.
struct Announce {
  std::uint64_t flow = 0;  // the sender's id, unique per sender endpoint
  std::uint64_t size_bytes = 0;
  std::int64_t slack_ns = kNoDeadline;  // time left to the no-bubble deadline
  // 1: a computation waits for it; kUrgentOnPlan: and it started under its
  // Plan's grant (only to a receiver that advertised kCapPlans).
  std::uint8_t urgent = 0;
  std::uint32_t criticality = 0;
  std::uint64_t group = 0;  // the consumer op (flows it waits for together)
  std::uint64_t tag = 0;    // lets the receiver match a posted buffer
  bool operator==(const Announce&) const = default;
};
inline constexpr std::uint8_t kUrgentOnPlan = 3;

// Sender -> receiver: the hint moved as execution moved.
struct Update {
  std::uint64_t flow = 0;
  std::int64_t slack_ns = kNoDeadline;
  std::uint8_t urgent = 0;
  std::uint32_t criticality = 0;
  std::uint64_t group = 0;
  bool operator==(const Update&) const = default;
};

// Receiver -> sender: a lease on a rate (core::Grant on the wire).
struct Grant {
  std::uint64_t flow = 0;
  std::uint64_t rate_bps = 0;
  std::uint32_t epoch = 0;
  std::uint64_t lease_ns = 0;  // relative: starts when the sender receives it
  std::uint64_t byte_cap = 0;
  std::uint8_t priority = 0;
  bool operator==(const Grant&) const = default;
};

// Receiver -> sender: every byte of the flow arrived.
struct Done {
  std::uint64_t flow = 0;
  std::uint64_t bytes = 0;
  bool operator==(const Done&) const = default;
};

// Sender -> receiver: its own uplink limits the flow to rate_bps (what the
// flows it serves first leave; core::uplink_shares), or no longer limits it
// (kNoUplinkLimit). Sent only to a receiver that advertised
// kCapUplinkReports, with hysteresis and at most once per report horizon per
// flow (core::decide_report), so grants and reports do not chase each other.
inline constexpr std::uint64_t kNoUplinkLimit = std::numeric_limits<std::uint64_t>::max();
struct Report {
  std::uint64_t flow = 0;
  std::uint64_t rate_bps = kNoUplinkLimit;
  bool operator==(const Report&) const = default;
};

// Sender -> receiver: an urgent transfer its compute schedule will start in
// starts_in_ns (core::ReceiverScheduler::announce). The receiver plans its
// rate in from a short lead before that and grants it ahead: a Grant whose
// flow is kPlanGrantBit | number. The sender's flow to this receiver with
// the same group, started in time, goes at that grant from its first byte
// (no unscheduled burst, no grant round trip) and says so in its Announce
// (kUrgentOnPlan). Sent only to a receiver that advertised kCapPlans.
inline constexpr std::uint64_t kPlanGrantBit = std::uint64_t{1} << 63;
struct Plan {
  std::uint32_t number = 0;  // the sender's, per receiver; its grant names it
  std::uint64_t size_bytes = 0;
  std::int64_t starts_in_ns = 0;        // from when it is sent, >= 0
  std::int64_t slack_ns = kNoDeadline;  // to its no-bubble deadline, from when it is sent
  std::uint32_t criticality = 0;
  std::uint64_t group = 0;  // the consumer op, != 0: what its flow is matched by
  bool operator==(const Plan&) const = default;
};

// Receiver -> sender: the plan with this number cannot be on time with what
// the receiver has already planned and granted (core::AnnounceOutcome::
// kInfeasible), said once, when the plan comes. The sender's application
// hears it as a risk report before its transfer exists (FlowRisk::planned),
// early enough to reorder its work or send sooner. Sent only to a sender
// that advertised kCapPlanWarnings.
struct PlanWarning {
  std::uint32_t number = 0;
  bool operator==(const PlanWarning&) const = default;
};

enum class ErrorCode : std::uint16_t {
  kMalformed = 1,
  kUnsupportedVersion = 2,
  kFlowLimit = 3,
  kMemoryLimit = 4,
  kTooLarge = 5,
  kUnknownFlow = 6,
  kAborted = 7,
};

// Either way: a flow (flow != 0) or the connection (flow == 0) failed.
struct Error {
  std::uint64_t flow = 0;
  // 1: written by the flow's receiver (about a flow the reader sends);
  // 0: by its sender (about a flow the reader receives). A control connection
  // carries flows both ways, and flow ids are the sender's.
  std::uint8_t from_receiver = 0;
  ErrorCode code = ErrorCode::kMalformed;
  std::string reason;  // at most kMaxReasonBytes
  bool operator==(const Error&) const = default;
};

// Opens a flow on a data connection; the flow's bytes follow it raw. The
// first frame of every data connection; on a connection to a receiver that
// advertised kCapDataReuse, the next flow's DataOpen may follow the last byte
// of the one before, once the sender has its Done; to one that advertised
// kCapDataFollow too, right behind that byte.
struct DataOpen {
  // Which control connection its flow was announced on: that connection's
  // id, derived from both its Hellos (SessionCrypto::connection_id()).
  std::uint64_t connection = 0;
  std::uint64_t flow = 0;
  std::uint64_t size_bytes = 0;
  Token token{};  // MAC of (flow, size) under the control connection's session key
  bool operator==(const DataOpen&) const = default;
};

// Each way, after both Hellos: the response to the challenge, a MAC of both
// Hellos under a key derived from the job key, and the member's Ed25519
// signature of both Hellos (zeros from an endpoint that speaks for no
// member). Every later frame is Sealed.
struct Auth {
  Proof proof{};
  Signature signature{};
  bool operator==(const Auth&) const = default;
};

// One inner frame encrypted and authenticated (ChaCha20-Poly1305, a counter
// per direction as its nonce). The bytes are the whole body.
struct Sealed {
  std::vector<std::uint8_t> bytes;
  bool operator==(const Sealed&) const = default;
};

using Message = std::variant<Hello, Announce, Update, Grant, Done, Error, DataOpen, Auth, Sealed,
                             Report, Plan, PlanWarning>;

// Appends one frame.
void encode(const Message& message, std::vector<std::uint8_t>& out);

enum class DecodeStatus : std::uint8_t { kMessage, kNeedMore, kInvalid };

struct DecodeResult {
  DecodeStatus status = DecodeStatus::kNeedMore;
  Message message;
  std::size_t consumed_bytes = 0;  // of the input, when status is kMessage
  std::string error;               // why, when status is kInvalid
};

// Decodes the first frame of `bytes`. kNeedMore: a valid prefix of a frame.
// kInvalid: unsupported version, unknown type, oversized or malformed body
// (the connection must be closed).
DecodeResult decode(std::span<const std::uint8_t> bytes);

// An Error frame in an older version's header (Error's layout has not
// changed since version 1) saying this endpoint needs version kVersion, so
// that an older peer is told why it was refused instead of a bare close.
std::vector<std::uint8_t> older_version_refusal(std::uint16_t version);
// A member name as Hello carries it: 1-64 of [A-Za-z0-9._-].
bool valid_member_name(std::string_view name);
// The frame version of `bytes`' header (0 if fewer than two bytes).
std::uint16_t frame_version(std::span<const std::uint8_t> bytes);
// The length of the frame at the start of `bytes` as its header says
// (header and body; whether that body length is allowed is decode()'s to
// judge), or kHeaderBytes while the header is incomplete.
std::size_t frame_bytes(std::span<const std::uint8_t> bytes);

}  // namespace safs::runtime::wire
