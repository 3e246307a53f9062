// The control protocol's cryptography: proofs verify under the job key only;
// sealed frames open once, in order, on their own connection and direction;
// flow tokens bind to one session; key files are read strictly.
#include "runtime/security.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "runtime/wire.h"

namespace safs::runtime {
namespace {

std::vector<std::uint8_t> hello_bytes(std::uint16_t listen_port) {
  wire::Hello hello;
  hello.listen_port = listen_port;
  hello.nonce = random_nonce();
  std::vector<std::uint8_t> bytes;
  wire::encode(hello, bytes);
  return bytes;
}

JobKey key_of(std::uint8_t fill) {
  JobKey key;
  key.fill(fill);
  return key;
}

struct Pair {
  Pair(const JobKey& initiator_key, const JobKey& responder_key)
      : a(hello_bytes(1)),
        b(hello_bytes(2)),
        initiator(initiator_key, SessionCrypto::Role::kInitiator, a, b),
        responder(responder_key, SessionCrypto::Role::kResponder, a, b) {}
  std::vector<std::uint8_t> a, b;
  SessionCrypto initiator, responder;
};

TEST(Security, ProofsVerifyOnlyUnderTheSameJobKey) {
  Pair same(key_of(1), key_of(1));
  EXPECT_TRUE(same.responder.verify_peer_proof(same.initiator.own_proof()));
  EXPECT_TRUE(same.initiator.verify_peer_proof(same.responder.own_proof()));
  // Reflecting the other side's own proof back does not pass.
  EXPECT_FALSE(same.initiator.verify_peer_proof(same.initiator.own_proof()));
  Pair other(key_of(1), key_of(2));
  EXPECT_FALSE(other.responder.verify_peer_proof(other.initiator.own_proof()));
  // A proof recorded on one connection is worthless on the next (new nonces).
  Pair next(key_of(1), key_of(1));
  EXPECT_FALSE(next.responder.verify_peer_proof(same.initiator.own_proof()));
}

TEST(Security, SealedFramesOpenOnceInOrderAndOnlyTheirWay) {
  Pair pair(key_of(3), key_of(3));
  const std::vector<std::uint8_t> first = {1, 2, 3}, second = {4, 5};
  std::vector<std::uint8_t> sealed_first, sealed_second, plain;
  pair.initiator.seal(first, sealed_first);
  pair.initiator.seal(second, sealed_second);
  // Out of order fails, and so does the other direction.
  EXPECT_FALSE(pair.responder.open(sealed_second, plain));
  EXPECT_FALSE(pair.initiator.open(sealed_first, plain));
  ASSERT_TRUE(pair.responder.open(sealed_first, plain));
  EXPECT_EQ(plain, first);
  EXPECT_FALSE(pair.responder.open(sealed_first, plain));  // a replay
  std::vector<std::uint8_t> flipped = sealed_second;
  flipped[0] ^= 1;
  EXPECT_FALSE(pair.responder.open(flipped, plain));  // tampered
  ASSERT_TRUE(pair.responder.open(sealed_second, plain));
  EXPECT_EQ(plain, second);
}

TEST(Security, FlowTokensBindToTheSessionTheFlowAndItsSize) {
  Pair pair(key_of(4), key_of(4));
  const wire::Token token = pair.initiator.own_flow_token(7, 1000);
  EXPECT_TRUE(pair.responder.verify_peer_flow_token(7, 1000, token));
  EXPECT_FALSE(pair.responder.verify_peer_flow_token(8, 1000, token));
  EXPECT_FALSE(pair.responder.verify_peer_flow_token(7, 1001, token));
  EXPECT_FALSE(pair.initiator.verify_peer_flow_token(7, 1000, token));  // not the other way
  Pair other(key_of(4), key_of(4));
  EXPECT_FALSE(other.responder.verify_peer_flow_token(7, 1000, token));  // not another session
}

TEST(Security, MemberSignaturesVerifyOnlyUnderThatMembersKeyOnThatConnection) {
  Pair pair(key_of(5), key_of(5));
  const MemberKey alice = generate_member_key("alice");
  const MemberKey mallory = generate_member_key("mallory");
  const wire::Signature signed_by_alice = pair.initiator.member_signature(alice);
  EXPECT_TRUE(pair.responder.verify_member_signature(alice.public_key, signed_by_alice));
  // Another member cannot sign as alice, and alice's signature is worthless
  // on another connection (a replayed handshake).
  EXPECT_FALSE(pair.responder.verify_member_signature(alice.public_key,
                                                      pair.initiator.member_signature(mallory)));
  Pair next(key_of(5), key_of(5));
  EXPECT_FALSE(next.responder.verify_member_signature(alice.public_key, signed_by_alice));
  // Both sides name the connection alike; another connection differently.
  EXPECT_EQ(pair.initiator.connection_id(), pair.responder.connection_id());
  EXPECT_NE(pair.initiator.connection_id(), next.initiator.connection_id());
}

TEST(Security, MemberKeyAndRosterFilesRoundTripAndAreCheckedStrictly) {
  const std::string key_path = ::testing::TempDir() + "safs_member_key_test";
  const std::string roster_path = ::testing::TempDir() + "safs_roster_test";
  const MemberKey bob = generate_member_key("bob-1");
  std::string error;
  { std::ofstream(key_path) << member_key_line(bob) << '\n'; }
  chmod(key_path.c_str(), 0644);
  EXPECT_FALSE(read_member_key_file(key_path, error));
  EXPECT_NE(error.find("readable by group or others"), std::string::npos) << error;
  chmod(key_path.c_str(), 0600);
  const auto read_back = read_member_key_file(key_path, error);
  ASSERT_TRUE(read_back) << error;
  EXPECT_EQ(read_back->name, "bob-1");
  EXPECT_EQ(read_back->public_key, bob.public_key);
  { std::ofstream(key_path) << "bob:1 " << std::string(64, 'a') << '\n'; }
  EXPECT_FALSE(read_member_key_file(key_path, error));
  EXPECT_NE(error.find("expected one line NAME SEED"), std::string::npos) << error;
  const MemberKey carol = generate_member_key("carol");
  {
    std::ofstream(roster_path) << "# the job's members\n"
                               << roster_line(bob) << "\n\n"
                               << roster_line(carol) << " inference\n";
  }
  const auto roster = read_roster_file(roster_path, error);
  ASSERT_TRUE(roster) << error;
  EXPECT_EQ(roster->size(), 2u);
  EXPECT_EQ(roster->at("carol"), (RosterEntry{carol.public_key, "inference"}));
  EXPECT_EQ(roster->at("bob-1").job, "");
  { std::ofstream(roster_path) << roster_line(bob) << '\n' << roster_line(bob) << '\n'; }
  EXPECT_FALSE(read_roster_file(roster_path, error));
  EXPECT_NE(error.find("line 2: member bob-1 listed twice"), std::string::npos) << error;
  { std::ofstream(roster_path) << "carol 1234\n"; }
  EXPECT_FALSE(read_roster_file(roster_path, error));
  EXPECT_NE(error.find("line 1: expected NAME PUBLIC-KEY [JOB]"), std::string::npos) << error;
  unlink(key_path.c_str());
  unlink(roster_path.c_str());
}

TEST(Security, KeyFilesMustBePrivateAndWellFormed) {
  const std::string path = ::testing::TempDir() + "safs_job_key_test";
  std::string error;
  { std::ofstream(path) << std::string(64, 'a') << '\n'; }
  chmod(path.c_str(), 0644);
  EXPECT_FALSE(read_job_key_file(path, error));
  EXPECT_NE(error.find("readable by group or others"), std::string::npos) << error;
  chmod(path.c_str(), 0600);
  const auto key = read_job_key_file(path, error);
  ASSERT_TRUE(key) << error;
  EXPECT_EQ((*key)[0], 0xaa);
  std::string raw_key(31, 'r');
  raw_key += '\n';  // random key bytes may end in a newline: still 32 raw bytes
  { std::ofstream(path, std::ios::binary) << raw_key; }
  const auto raw = read_job_key_file(path, error);
  ASSERT_TRUE(raw) << error;
  EXPECT_EQ((*raw)[31], '\n');
  { std::ofstream(path, std::ios::binary) << std::string(32, 'r') << '\n'; }
  const auto raw_with_newline = read_job_key_file(path, error);
  ASSERT_TRUE(raw_with_newline) << error;
  EXPECT_EQ((*raw_with_newline)[31], 'r');
  { std::ofstream(path) << "short"; }
  EXPECT_FALSE(read_job_key_file(path, error));
  EXPECT_NE(error.find("64 hex digits"), std::string::npos) << error;
  unlink(path.c_str());
  // A directory or a device is refused before it is read (a directory ended
  // in a bare stream exception; a device would be read without end).
  const std::string directory = ::testing::TempDir() + "safs_job_key_dir";
  mkdir(directory.c_str(), 0700);
  EXPECT_FALSE(read_job_key_file(directory, error));
  EXPECT_NE(error.find("is not a regular file"), std::string::npos) << error;
  rmdir(directory.c_str());
  EXPECT_FALSE(read_roster_file("/dev/zero", error));
  EXPECT_NE(error.find("is not a regular file"), std::string::npos) << error;
  setenv(kJobKeyVariable, std::string(64, 'b').c_str(), 1);
  const auto from_env = job_key_from_environment(error);
  unsetenv(kJobKeyVariable);
  ASSERT_TRUE(from_env) << error;
  EXPECT_EQ((*from_env)[31], 0xbb);
}

}  // namespace
}  // namespace safs::runtime
