#include "runtime/wire.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "runtime/byte_order.h"

namespace safs::runtime::wire {
namespace {

template <typename T>
constexpr Type type_of() {
  if constexpr (std::is_same_v<T, Hello>) return Type::kHello;
  if constexpr (std::is_same_v<T, Announce>) return Type::kAnnounce;
  if constexpr (std::is_same_v<T, Update>) return Type::kUpdate;
  if constexpr (std::is_same_v<T, Grant>) return Type::kGrant;
  if constexpr (std::is_same_v<T, Done>) return Type::kDone;
  if constexpr (std::is_same_v<T, Error>) return Type::kError;
  if constexpr (std::is_same_v<T, DataOpen>) return Type::kDataOpen;
  if constexpr (std::is_same_v<T, Auth>) return Type::kAuth;
  if constexpr (std::is_same_v<T, Sealed>) return Type::kSealed;
  if constexpr (std::is_same_v<T, Report>) return Type::kReport;
  if constexpr (std::is_same_v<T, Plan>) return Type::kPlan;
  if constexpr (std::is_same_v<T, PlanWarning>) return Type::kPlanWarning;
}

// Each message's fields in wire order, once for both directions; each field
// goes on the wire at its own width (big-endian). Error's reason is a u16
// length and at most kMaxReasonBytes of text.
template <typename M>
constexpr auto kFields = nullptr;
template <>
constexpr auto kFields<Hello> =
    std::tuple{&Hello::magic,       &Hello::max_version, &Hello::capabilities, &Hello::downlink_bps,
               &Hello::listen_port, &Hello::nonce,       &Hello::member};
template <>
constexpr auto kFields<Announce> = std::tuple{
    &Announce::flow,        &Announce::size_bytes, &Announce::slack_ns, &Announce::urgent,
    &Announce::criticality, &Announce::group,      &Announce::tag};
template <>
constexpr auto kFields<Update> = std::tuple{&Update::flow, &Update::slack_ns, &Update::urgent,
                                            &Update::criticality, &Update::group};
template <>
constexpr auto kFields<Grant> = std::tuple{&Grant::flow,     &Grant::rate_bps, &Grant::epoch,
                                           &Grant::lease_ns, &Grant::byte_cap, &Grant::priority};
template <>
constexpr auto kFields<Done> = std::tuple{&Done::flow, &Done::bytes};
template <>
constexpr auto kFields<Error> =
    std::tuple{&Error::flow, &Error::from_receiver, &Error::code, &Error::reason};
template <>
constexpr auto kFields<DataOpen> =
    std::tuple{&DataOpen::connection, &DataOpen::flow, &DataOpen::size_bytes, &DataOpen::token};
template <>
constexpr auto kFields<Auth> = std::tuple{&Auth::proof, &Auth::signature};
template <>
constexpr auto kFields<Sealed> = std::tuple{&Sealed::bytes};
template <>
constexpr auto kFields<Report> = std::tuple{&Report::flow, &Report::rate_bps};
template <>
constexpr auto kFields<Plan> = std::tuple{&Plan::number,   &Plan::size_bytes,  &Plan::starts_in_ns,
                                          &Plan::slack_ns, &Plan::criticality, &Plan::group};
template <>
constexpr auto kFields<PlanWarning> = std::tuple{&PlanWarning::number};

class FieldWriter {
 public:
  explicit FieldWriter(ByteWriter& w) : w_(w) {}
  void put(std::uint8_t v) { w_.u8(v); }
  void put(std::uint16_t v) { w_.u16(v); }
  void put(std::uint32_t v) { w_.u32(v); }
  void put(std::uint64_t v) { w_.u64(v); }
  void put(std::int64_t v) { w_.i64(v); }
  void put(ErrorCode v) { w_.u16(static_cast<std::uint16_t>(v)); }
  void put(const std::string& text) {
    const std::string_view kept = std::string_view(text).substr(0, kMaxReasonBytes);
    w_.u16(static_cast<std::uint16_t>(kept.size()));
    w_.bytes(kept);
  }
  template <std::size_t N>
  void put(const std::array<std::uint8_t, N>& bytes) {
    w_.bytes(std::string_view(reinterpret_cast<const char*>(bytes.data()), N));
  }
  void put(const std::vector<std::uint8_t>& rest) {  // the rest of the body
    w_.bytes(std::string_view(reinterpret_cast<const char*>(rest.data()), rest.size()));
  }

 private:
  ByteWriter& w_;
};

class FieldReader {
 public:
  explicit FieldReader(ByteReader& r) : r_(r) {}
  void get(std::uint8_t& v) { v = r_.u8(); }
  void get(std::uint16_t& v) { v = r_.u16(); }
  void get(std::uint32_t& v) { v = r_.u32(); }
  void get(std::uint64_t& v) { v = r_.u64(); }
  void get(std::int64_t& v) { v = r_.i64(); }
  void get(ErrorCode& v) { v = static_cast<ErrorCode>(r_.u16()); }
  void get(std::string& text) {
    const std::uint16_t length = r_.u16();
    if (length > kMaxReasonBytes) {
      error = "text field longer than " + std::to_string(kMaxReasonBytes) + " bytes";
      return;
    }
    text = r_.string(length);
  }
  template <std::size_t N>
  void get(std::array<std::uint8_t, N>& bytes) {
    const std::string raw = r_.string(N);
    std::copy(raw.begin(), raw.end(), bytes.begin());
  }
  void get(std::vector<std::uint8_t>& rest) {
    const std::string raw = r_.string(r_.remaining());
    rest.assign(raw.begin(), raw.end());
  }
  std::string error;  // empty while the fields are well formed

 private:
  ByteReader& r_;
};

template <typename M>
void write_body(ByteWriter& w, const M& m) {
  FieldWriter out(w);
  std::apply([&](auto... field) { (out.put(m.*field), ...); }, kFields<M>);
}

template <typename M>
void write_frame(std::vector<std::uint8_t>& out, std::uint16_t version, const M& m) {
  ByteWriter w(out);
  w.u16(version);
  w.u16(static_cast<std::uint16_t>(type_of<M>()));
  const std::size_t length_at = w.size();
  w.u32(0);
  write_body(w, m);
  w.patch_u32(length_at, static_cast<std::uint32_t>(w.size() - length_at - 4));
}

// What a complete body may still get wrong; empty when it is well formed.
std::string check(const Hello& m) {
  if (m.magic != kMagic) return "hello without the SAFS magic";
  if (m.max_version < kVersion) return "hello with an unsupported version";
  if (!m.member.empty() && !valid_member_name(m.member)) return "hello with an invalid member name";
  return {};
}
std::string check(const Announce& m) {
  if (m.flow >= kPlanGrantBit) return "announce of a flow id with the top bit set";
  return m.urgent > 1 && m.urgent != kUrgentOnPlan ? "announce with an invalid class"
                                                   : std::string();
}
std::string check(const Update& m) {
  return m.urgent > 1 ? "update with an invalid class" : std::string();
}
std::string check(const Plan& m) {
  if (m.group == 0) return "plan without a group";
  return m.starts_in_ns < 0 ? "plan that starts in the past" : std::string();
}
std::string check(const Sealed& m) {
  return m.bytes.size() < kHeaderBytes + kSealTagBytes ? "sealed frame shorter than a frame"
                                                       : std::string();
}
std::string check(const Error& m) {
  return m.from_receiver > 1 ? "error with an invalid direction" : std::string();
}
template <typename M>
std::string check(const M&) {
  return {};
}

template <typename T>
DecodeResult decode_as(std::span<const std::uint8_t> body, std::size_t frame_bytes) {
  DecodeResult result;
  T message;
  ByteReader reader(body);
  FieldReader in(reader);
  std::apply([&](auto... field) { (in.get(message.*field), ...); }, kFields<T>);
  std::string error = std::move(in.error);
  if (error.empty() && reader.short_read()) error = "truncated body";
  if (error.empty()) error = check(message);
  if (error.empty() && reader.remaining() != 0) error = "trailing bytes in body";
  if (!error.empty()) {
    result.status = DecodeStatus::kInvalid;
    result.error = std::move(error);
    return result;
  }
  result.status = DecodeStatus::kMessage;
  result.message = std::move(message);
  result.consumed_bytes = frame_bytes;
  return result;
}

DecodeResult invalid(std::string why) {
  DecodeResult result;
  result.status = DecodeStatus::kInvalid;
  result.error = std::move(why);
  return result;
}

}  // namespace

void encode(const Message& message, std::vector<std::uint8_t>& out) {
  std::visit([&out](const auto& m) { write_frame(out, kVersion, m); }, message);
}

DecodeResult decode(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < kHeaderBytes) return {};
  ByteReader header(bytes.first(kHeaderBytes));
  const std::uint16_t version = header.u16();
  const std::uint16_t type = header.u16();
  const std::uint32_t body_bytes = header.u32();
  if (version != kVersion) return invalid("unsupported frame version " + std::to_string(version));
  const std::uint32_t limit =
      static_cast<Type>(type) == Type::kSealed ? kMaxSealedBodyBytes : kMaxBodyBytes;
  if (body_bytes > limit) {
    return invalid("oversized frame (" + std::to_string(body_bytes) + " body bytes)");
  }
  const std::size_t frame_bytes = kHeaderBytes + body_bytes;
  if (bytes.size() < frame_bytes) return {};
  const auto body = bytes.subspan(kHeaderBytes, body_bytes);
  switch (static_cast<Type>(type)) {
    case Type::kHello:
      return decode_as<Hello>(body, frame_bytes);
    case Type::kAnnounce:
      return decode_as<Announce>(body, frame_bytes);
    case Type::kUpdate:
      return decode_as<Update>(body, frame_bytes);
    case Type::kGrant:
      return decode_as<Grant>(body, frame_bytes);
    case Type::kDone:
      return decode_as<Done>(body, frame_bytes);
    case Type::kError:
      return decode_as<Error>(body, frame_bytes);
    case Type::kDataOpen:
      return decode_as<DataOpen>(body, frame_bytes);
    case Type::kAuth:
      return decode_as<Auth>(body, frame_bytes);
    case Type::kSealed:
      return decode_as<Sealed>(body, frame_bytes);
    case Type::kReport:
      return decode_as<Report>(body, frame_bytes);
    case Type::kPlan:
      return decode_as<Plan>(body, frame_bytes);
    case Type::kPlanWarning:
      return decode_as<PlanWarning>(body, frame_bytes);
  }
  return invalid("unknown message type " + std::to_string(type));
}

std::vector<std::uint8_t> older_version_refusal(std::uint16_t version) {
  Error error;
  error.code = ErrorCode::kUnsupportedVersion;
  error.reason = "this endpoint speaks SAFS protocol version " + std::to_string(kVersion) +
                 " (authenticated, member identities) only";
  std::vector<std::uint8_t> out;
  write_frame(out, version, error);
  return out;
}

bool valid_member_name(std::string_view name) {
  return !name.empty() && name.size() <= kMaxMemberNameBytes &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
         });
}

std::uint16_t frame_version(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < 2) return 0;
  return static_cast<std::uint16_t>((bytes[0] << 8) | bytes[1]);
}

std::size_t frame_bytes(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < kHeaderBytes) return kHeaderBytes;
  ByteReader header(bytes.first(kHeaderBytes));
  header.u16();  // version
  header.u16();  // type
  return kHeaderBytes + header.u32();
}

}  // namespace safs::runtime::wire
