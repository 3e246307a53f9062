#include "runtime/wire.h"

#include <string>
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
}

void write_body(ByteWriter& w, const Hello& m) {
  w.u32(m.magic);
  w.u16(m.max_version);
  w.u32(m.capabilities);
  w.u64(m.session);
  w.u64(m.downlink_bps);
  w.u16(m.listen_port);
}
void write_body(ByteWriter& w, const Announce& m) {
  w.u64(m.flow);
  w.u64(m.size_bytes);
  w.i64(m.slack_ns);
  w.u8(m.urgent);
  w.u32(m.criticality);
  w.u64(m.group);
  w.u64(m.tag);
}
void write_body(ByteWriter& w, const Update& m) {
  w.u64(m.flow);
  w.i64(m.slack_ns);
  w.u8(m.urgent);
  w.u32(m.criticality);
  w.u64(m.group);
}
void write_body(ByteWriter& w, const Grant& m) {
  w.u64(m.flow);
  w.u64(m.rate_bps);
  w.u32(m.epoch);
  w.u64(m.lease_ns);
  w.u64(m.byte_cap);
  w.u8(m.priority);
}
void write_body(ByteWriter& w, const Done& m) {
  w.u64(m.flow);
  w.u64(m.bytes);
}
void write_body(ByteWriter& w, const Error& m) {
  const std::string_view reason =
      std::string_view(m.reason).substr(0, std::min(m.reason.size(), kMaxReasonBytes));
  w.u64(m.flow);
  w.u8(m.from_receiver);
  w.u16(static_cast<std::uint16_t>(m.code));
  w.u16(static_cast<std::uint16_t>(reason.size()));
  w.bytes(reason);
}
void write_body(ByteWriter& w, const DataOpen& m) {
  w.u64(m.session);
  w.u64(m.flow);
  w.u64(m.size_bytes);
}

// Each reader returns an error text, empty when the body is well formed.
std::string read_body(ByteReader& r, Hello& m) {
  m.magic = r.u32();
  m.max_version = r.u16();
  m.capabilities = r.u32();
  m.session = r.u64();
  m.downlink_bps = r.u64();
  m.listen_port = r.u16();
  if (!r.short_read() && m.magic != kMagic) return "hello without the SAFS magic";
  if (!r.short_read() && m.max_version < kVersion) return "hello with an unsupported version";
  return {};
}
std::string read_body(ByteReader& r, Announce& m) {
  m.flow = r.u64();
  m.size_bytes = r.u64();
  m.slack_ns = r.i64();
  m.urgent = r.u8();
  m.criticality = r.u32();
  m.group = r.u64();
  m.tag = r.u64();
  if (!r.short_read() && m.urgent > 1) return "announce with an invalid class";
  return {};
}
std::string read_body(ByteReader& r, Update& m) {
  m.flow = r.u64();
  m.slack_ns = r.i64();
  m.urgent = r.u8();
  m.criticality = r.u32();
  m.group = r.u64();
  if (!r.short_read() && m.urgent > 1) return "update with an invalid class";
  return {};
}
std::string read_body(ByteReader& r, Grant& m) {
  m.flow = r.u64();
  m.rate_bps = r.u64();
  m.epoch = r.u32();
  m.lease_ns = r.u64();
  m.byte_cap = r.u64();
  m.priority = r.u8();
  return {};
}
std::string read_body(ByteReader& r, Done& m) {
  m.flow = r.u64();
  m.bytes = r.u64();
  return {};
}
std::string read_body(ByteReader& r, Error& m) {
  m.flow = r.u64();
  m.from_receiver = r.u8();
  m.code = static_cast<ErrorCode>(r.u16());
  const std::uint16_t length = r.u16();
  if (length > kMaxReasonBytes) return "error reason longer than allowed";
  m.reason = r.string(length);
  if (!r.short_read() && m.from_receiver > 1) return "error with an invalid direction";
  return {};
}
std::string read_body(ByteReader& r, DataOpen& m) {
  m.session = r.u64();
  m.flow = r.u64();
  m.size_bytes = r.u64();
  return {};
}

template <typename T>
DecodeResult decode_as(std::span<const std::uint8_t> body, std::size_t frame_bytes) {
  DecodeResult result;
  T message;
  ByteReader reader(body);
  std::string error = read_body(reader, message);
  if (error.empty() && reader.short_read()) error = "truncated body";
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
  std::visit(
      [&out](const auto& m) {
        ByteWriter w(out);
        w.u16(kVersion);
        w.u16(static_cast<std::uint16_t>(type_of<std::decay_t<decltype(m)>>()));
        const std::size_t length_at = w.size();
        w.u32(0);
        write_body(w, m);
        w.patch_u32(length_at, static_cast<std::uint32_t>(w.size() - length_at - 4));
      },
      message);
}

DecodeResult decode(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < kHeaderBytes) return {};
  ByteReader header(bytes.first(kHeaderBytes));
  const std::uint16_t version = header.u16();
  const std::uint16_t type = header.u16();
  const std::uint32_t body_bytes = header.u32();
  if (version != kVersion) return invalid("unsupported frame version " + std::to_string(version));
  if (body_bytes > kMaxBodyBytes) {
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
  }
  return invalid("unknown message type " + std::to_string(type));
}

}  // namespace safs::runtime::wire
