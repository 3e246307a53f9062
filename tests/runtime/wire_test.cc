// The control protocol's codec: every message round-trips; every strict
// prefix of a frame asks for more; bad versions, unknown types, oversized
// and malformed bodies are rejected with a reason.
#include "runtime/wire.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace safs::runtime::wire {
namespace {

std::vector<Message> samples() {
  Hello hello;
  hello.capabilities = kCapKernelPacing | kCapLeases;
  hello.downlink_bps = 400'000'000;
  hello.listen_port = 7000;
  hello.nonce.fill(0xab);
  hello.member = "worker-7";
  Announce announce{42, 1 << 20, -5'000, 1, 3, 9, 77};
  Update update{42, 1'000'000, 0, 1, 10};
  Grant grant{42, 123'456'789, 7, 200'000'000, 1 << 22, 5};
  Done done{42, 1 << 20};
  Error error{42, 1, ErrorCode::kFlowLimit, "more than 64 flows"};
  DataOpen open{0xfeedull, 42, 1 << 20, {}};
  open.token.fill(0x5c);
  Auth auth;
  auth.proof.fill(0x17);
  auth.signature.fill(0x29);
  Sealed sealed{std::vector<std::uint8_t>(kHeaderBytes + kSealTagBytes + 30, 0xee)};
  Report limited{42, 2'500'000}, unlimited{43, kNoUplinkLimit};
  Plan plan{7, 1 << 19, 40'000'000, 90'000'000, 2, 11};
  Announce on_plan{43, 1 << 19, 5'000, kUrgentOnPlan, 0, 11, 78};
  PlanWarning warning{7};
  return {hello, announce, update,  grant,     done, error,   open,
          auth,  sealed,   limited, unlimited, plan, on_plan, warning};
}

std::vector<std::uint8_t> encoded(const Message& message) {
  std::vector<std::uint8_t> out;
  encode(message, out);
  return out;
}

TEST(Wire, EveryMessageRoundTrips) {
  for (const Message& message : samples()) {
    const auto bytes = encoded(message);
    const DecodeResult result = decode(bytes);
    ASSERT_EQ(result.status, DecodeStatus::kMessage) << result.error;
    EXPECT_EQ(result.consumed_bytes, bytes.size());
    EXPECT_EQ(result.message, message);
  }
}

TEST(Wire, FramesBackToBackDecodeOneAtATime) {
  std::vector<std::uint8_t> stream;
  for (const Message& message : samples()) encode(message, stream);
  std::size_t offset = 0;
  for (const Message& message : samples()) {
    const DecodeResult result = decode(std::span(stream).subspan(offset));
    ASSERT_EQ(result.status, DecodeStatus::kMessage);
    EXPECT_EQ(result.message, message);
    offset += result.consumed_bytes;
  }
  EXPECT_EQ(offset, stream.size());
}

TEST(Wire, EveryStrictPrefixNeedsMore) {
  for (const Message& message : samples()) {
    const auto bytes = encoded(message);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_EQ(decode(std::span(bytes).first(n)).status, DecodeStatus::kNeedMore) << n;
    }
  }
}

TEST(Wire, UnsupportedVersionIsRejected) {
  auto bytes = encoded(Done{1, 2});
  bytes[1] = 9;  // version 9
  const DecodeResult result = decode(bytes);
  EXPECT_EQ(result.status, DecodeStatus::kInvalid);
  EXPECT_NE(result.error.find("version"), std::string::npos);
}

TEST(Wire, UnknownTypeIsRejected) {
  auto bytes = encoded(Done{1, 2});
  bytes[3] = 99;
  const DecodeResult result = decode(bytes);
  EXPECT_EQ(result.status, DecodeStatus::kInvalid);
  EXPECT_NE(result.error.find("unknown message type 99"), std::string::npos);
}

TEST(Wire, OversizedFrameIsRejectedFromItsHeaderAlone) {
  const std::vector<std::uint8_t> header = {0, kVersion, 0, 5, 0x7f, 0xff, 0xff, 0xff};
  const DecodeResult result = decode(header);
  EXPECT_EQ(result.status, DecodeStatus::kInvalid);
  EXPECT_NE(result.error.find("oversized"), std::string::npos);
}

TEST(Wire, BodyShorterOrLongerThanItsTypeIsMalformed) {
  auto shorter = encoded(Done{1, 2});
  shorter[7] -= 1;  // claims 15 body bytes
  shorter.pop_back();
  EXPECT_EQ(decode(shorter).status, DecodeStatus::kInvalid);
  auto longer = encoded(Done{1, 2});
  longer[7] += 1;
  longer.push_back(0);
  const DecodeResult result = decode(longer);
  EXPECT_EQ(result.status, DecodeStatus::kInvalid);
  EXPECT_NE(result.error.find("trailing"), std::string::npos);
}

TEST(Wire, HelloWithoutMagicIsRejected) {
  Hello hello;
  hello.magic = 0x48545450;  // "HTTP"
  const DecodeResult result = decode(encoded(hello));
  EXPECT_EQ(result.status, DecodeStatus::kInvalid);
  EXPECT_NE(result.error.find("magic"), std::string::npos);
}

TEST(Wire, InvalidFieldValuesAreRejected) {
  Announce announce{1, 2, 3, 1, 0, 0, 0};
  auto bytes = encoded(announce);
  bytes[kHeaderBytes + 24] = 2;  // the class byte
  EXPECT_EQ(decode(bytes).status, DecodeStatus::kInvalid);
}

TEST(Wire, AnnouncesOfTopBitIdsOrOfClassTwoAreRejected) {
  EXPECT_EQ(decode(encoded(Announce{kPlanGrantBit | 1, 2, 3, 1, 0, 0, 0})).status,
            DecodeStatus::kInvalid);
  EXPECT_EQ(decode(encoded(Announce{1, 2, 3, 2, 0, 0, 0})).status, DecodeStatus::kInvalid);
}

TEST(Wire, PlansWithoutAGroupOrStartingInThePastAreRejected) {
  const DecodeResult no_group = decode(encoded(Plan{1, 2, 3, 4, 0, 0}));
  EXPECT_EQ(no_group.status, DecodeStatus::kInvalid);
  EXPECT_NE(no_group.error.find("without a group"), std::string::npos);
  const DecodeResult past = decode(encoded(Plan{1, 2, -1, 4, 0, 5}));
  EXPECT_EQ(past.status, DecodeStatus::kInvalid);
  EXPECT_NE(past.error.find("in the past"), std::string::npos);
}

TEST(Wire, ErrorReasonIsBoundedOnBothSides) {
  Error error{0, 0, ErrorCode::kMalformed, std::string(1000, 'x')};
  const DecodeResult result = decode(encoded(error));
  ASSERT_EQ(result.status, DecodeStatus::kMessage);
  EXPECT_EQ(std::get<Error>(result.message).reason.size(), kMaxReasonBytes);
}

TEST(Wire, OlderPeersAreRefusedWithAFrameTheyCanRead) {
  for (std::uint16_t version = 1; version < kVersion; ++version) {
    // An older Done frame: the header says so.
    std::vector<std::uint8_t> old = encoded(Done{1, 1});
    old[1] = static_cast<std::uint8_t>(version);
    const DecodeResult result = decode(old);
    EXPECT_EQ(result.status, DecodeStatus::kInvalid);
    EXPECT_NE(result.error.find("version " + std::to_string(version)), std::string::npos)
        << result.error;
    EXPECT_EQ(frame_version(old), version);
    // The refusal is an Error frame in the old version, with this version's layout.
    std::vector<std::uint8_t> refusal = older_version_refusal(version);
    EXPECT_EQ(frame_version(refusal), version);
    refusal[1] = static_cast<std::uint8_t>(kVersion);
    const DecodeResult read = decode(refusal);
    ASSERT_EQ(read.status, DecodeStatus::kMessage) << read.error;
    const auto* error = std::get_if<Error>(&read.message);
    ASSERT_NE(error, nullptr);
    EXPECT_EQ(error->code, ErrorCode::kUnsupportedVersion);
    EXPECT_NE(error->reason.find("version 3"), std::string::npos) << error->reason;
  }
}

TEST(Wire, MemberNamesAreCheckedInTheHello) {
  EXPECT_TRUE(valid_member_name("rank-12.node_a"));
  EXPECT_FALSE(valid_member_name(""));
  EXPECT_FALSE(valid_member_name("127.0.0.1:7000"));  // never mistaken for an address
  EXPECT_FALSE(valid_member_name(std::string(kMaxMemberNameBytes + 1, 'a')));
  Hello hello;
  hello.member = "bad name";
  const DecodeResult result = decode(encoded(hello));
  EXPECT_EQ(result.status, DecodeStatus::kInvalid);
  EXPECT_NE(result.error.find("invalid member name"), std::string::npos) << result.error;
}

TEST(Wire, SealedFrameMayHoldAWholeFrameButNoMore) {
  Sealed sealed{std::vector<std::uint8_t>(kMaxSealedBodyBytes, 1)};
  EXPECT_EQ(decode(encoded(sealed)).status, DecodeStatus::kMessage);
  sealed.bytes.push_back(1);
  EXPECT_EQ(decode(encoded(sealed)).status, DecodeStatus::kInvalid);
  Sealed tiny{std::vector<std::uint8_t>(kSealTagBytes, 1)};
  EXPECT_EQ(decode(encoded(tiny)).status, DecodeStatus::kInvalid);
}

}  // namespace
}  // namespace safs::runtime::wire
