// The cryptography of the control protocol (docs/security.md), on libsodium:
// the job key, the session keys each control connection derives from it and
// both Hellos, the proofs that answer the Hellos' challenges, the sealing of
// control frames, and the tokens that bind data connections to a session.
// Nothing here is hand-rolled: keyed BLAKE2b (crypto_generichash) and
// crypto_kdf derive keys, crypto_auth (HMAC-SHA-512-256) makes proofs and
// tokens, crypto_aead_chacha20poly1305_ietf seals frames, crypto_sign
// (Ed25519) signs a member's handshakes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/wire.h"

namespace safs::runtime {

inline constexpr std::size_t kJobKeyBytes = 32;
using JobKey = std::array<std::uint8_t, kJobKeyBytes>;

// Environment variables a job key is read from (never a command-line value).
inline constexpr const char* kJobKeyVariable = "SAFS_JOB_KEY";  // 64 hex digits
inline constexpr const char* kJobKeyFileVariable = "SAFS_JOB_KEY_FILE";

// A key file holds 32 raw bytes (a 33rd that is a newline is allowed; a 32nd
// is key) or 64 hex digits (a trailing newline is allowed) and must not be
// readable by group or others. nullopt and `error` when it cannot be used.
std::optional<JobKey> read_job_key_file(const std::string& path, std::string& error);
// SAFS_JOB_KEY, else the file SAFS_JOB_KEY_FILE names; nullopt and an empty
// `error` when neither is set.
std::optional<JobKey> job_key_from_environment(std::string& error);

// A member of the job: its name and its own Ed25519 key pair. The job key
// admits an endpoint to the job; the member key says which member it is,
// and only that member holds it, so no other member can claim its name.
inline constexpr std::size_t kMemberSeedBytes = 32;
using MemberPublicKey = std::array<std::uint8_t, 32>;
struct MemberKey {
  std::string name;                       // wire::valid_member_name()
  std::array<std::uint8_t, 64> secret{};  // libsodium's Ed25519 secret key (seed and public key)
  MemberPublicKey public_key{};
};
// Who the members are: each name with its public key and, when a receiver
// serves several jobs of one key, the job it belongs to (its weight:
// EnforcementConfig::job_weights). Public: every endpoint may hold the same
// roster file.
struct RosterEntry {
  MemberPublicKey public_key{};
  std::string job;  // "" when the roster names no jobs
  bool operator==(const RosterEntry&) const = default;
};
using Roster = std::map<std::string, RosterEntry>;

// Environment variables naming a member key file and a roster file.
inline constexpr const char* kMemberKeyFileVariable = "SAFS_MEMBER_KEY_FILE";
inline constexpr const char* kRosterFileVariable = "SAFS_ROSTER_FILE";

// The member key of `name` from a 32-byte seed (crypto_sign_seed_keypair).
MemberKey member_key_from_seed(const std::string& name,
                               const std::array<std::uint8_t, kMemberSeedBytes>& seed);
MemberKey generate_member_key(const std::string& name);
// A member key file is one line "NAME SEED" (SEED: 64 hex digits), not
// readable by group or others. Its roster line is "NAME PUBLIC-KEY".
std::optional<MemberKey> read_member_key_file(const std::string& path, std::string& error);
std::string member_key_line(const MemberKey& key);
std::string roster_line(const MemberKey& key);
// A roster file: a line "NAME PUBLIC-KEY [JOB]" (64 hex digits; JOB as a
// name) per member; blank lines and lines starting with '#' are skipped; a
// name listed twice, or a malformed line, is an error naming the line.
std::optional<Roster> read_roster_file(const std::string& path, std::string& error);

// Fresh random bytes (the OS's CSPRNG through libsodium).
wire::Nonce random_nonce();

// One control connection's keys. The initiator is the side that connected.
// Every key is derived from the job key and both Hellos (with their fresh
// nonces), so nothing recorded on one connection is valid on another, and a
// direction's frames are not valid the other way.
class SessionCrypto {
 public:
  enum class Role : std::uint8_t { kInitiator, kResponder };

  SessionCrypto(const JobKey& job_key, Role role, std::span<const std::uint8_t> initiator_hello,
                std::span<const std::uint8_t> responder_hello);
  ~SessionCrypto();
  SessionCrypto(const SessionCrypto&) = delete;
  SessionCrypto& operator=(const SessionCrypto&) = delete;

  // This side's answer to the challenge, and the check of the peer's
  // (constant time).
  wire::Proof own_proof() const;
  bool verify_peer_proof(const wire::Proof& proof) const;
  // This side's member signature of both Hellos, and the check of the peer's.
  wire::Signature member_signature(const MemberKey& member) const;
  bool verify_member_signature(const MemberPublicKey& key, const wire::Signature& signature) const;
  // Names this connection (DataOpen.connection): the first 8 bytes of the
  // transcript's hash, so it differs for every connection (both Hellos'
  // fresh nonces) and neither side can choose it.
  std::uint64_t connection_id() const;

  // Appends `plain` encrypted (ciphertext and tag) under this direction's key
  // and next counter.
  void seal(std::span<const std::uint8_t> plain, std::vector<std::uint8_t>& out);
  // Decrypts the next frame from the peer; false if it is not exactly that
  // frame (forged, replayed, reordered or from another connection).
  bool open(std::span<const std::uint8_t> sealed, std::vector<std::uint8_t>& plain);

  // The token of a data connection for a flow this side sends, and the one a
  // peer's data connection must carry.
  wire::Token own_flow_token(std::uint64_t flow, std::uint64_t size_bytes) const;
  bool verify_peer_flow_token(std::uint64_t flow, std::uint64_t size_bytes,
                              const wire::Token& token) const;

 private:
  using Key = std::array<std::uint8_t, 32>;
  Key transcript_hash_{};
  Key send_key_{}, receive_key_{};
  Key own_proof_key_{}, peer_proof_key_{};
  Key own_token_key_{}, peer_token_key_{};
  std::uint64_t send_counter_ = 0;
  std::uint64_t receive_counter_ = 0;
};

}  // namespace safs::runtime
