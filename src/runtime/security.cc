#include "runtime/security.h"

#include <sodium.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "runtime/byte_order.h"

namespace safs::runtime {
namespace {

// crypto_kdf's context: eight characters naming the protocol and version.
constexpr char kKdfContext[crypto_kdf_CONTEXTBYTES + 1] = "SAFSv3cc";
// What a member signs: this label and the transcript's hash, so a signature
// is never valid as anything else.
constexpr char kMemberSignatureLabel[] = "SAFSv3 member handshake";
// One subkey per purpose and per role that uses it to send: id = 2 x purpose
// + (0 for the initiator, 1 for the responder).
enum Purpose : std::uint64_t { kSeal = 1, kProof = 2, kToken = 3 };
std::uint64_t subkey_id(Purpose purpose, bool initiator) {
  return 2 * purpose + (initiator ? 0 : 1);
}

static_assert(crypto_auth_BYTES == wire::kProofBytes && crypto_auth_BYTES == wire::kTokenBytes);
static_assert(crypto_aead_chacha20poly1305_ietf_ABYTES == wire::kSealTagBytes);
static_assert(crypto_auth_KEYBYTES == 32 && crypto_kdf_KEYBYTES == 32);
static_assert(crypto_sign_BYTES == wire::kSignatureBytes && crypto_sign_PUBLICKEYBYTES == 32 &&
              crypto_sign_SECRETKEYBYTES == 64 && crypto_sign_SEEDBYTES == kMemberSeedBytes);
static_assert(crypto_aead_chacha20poly1305_ietf_KEYBYTES == 32);

void ensure_sodium() {
  if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialise");
}

// Exactly 32 bytes as 64 hex digits.
bool parse_hex32(const std::string& text, std::array<std::uint8_t, 32>& out) {
  std::size_t decoded = 0;
  return text.size() == 64 &&
         sodium_hex2bin(out.data(), out.size(), text.data(), text.size(), nullptr, &decoded,
                        nullptr) == 0 &&
         decoded == out.size();
}

std::optional<JobKey> parse_key(std::string text, std::string& error) {
  JobKey key{};
  const auto raw = [&] {
    std::memcpy(key.data(), text.data(), kJobKeyBytes);
    return key;
  };
  // Exactly 32 bytes are a raw key whatever they end with: random bytes end
  // in a newline or carriage return one time in 128, and stripping it would
  // reject the key.
  if (text.size() == kJobKeyBytes) return raw();
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.size() == kJobKeyBytes) return raw();
  if (!parse_hex32(text, key)) {
    error = "a job key is 32 raw bytes or 64 hex digits";
    return std::nullopt;
  }
  return key;
}

std::string hex(std::span<const std::uint8_t> bytes) {
  std::string text(2 * bytes.size() + 1, '\0');
  sodium_bin2hex(text.data(), text.size(), bytes.data(), bytes.size());
  text.pop_back();
  return text;
}

// A regular file of at most `max_bytes` (a directory, a device or a FIFO is
// refused before it is opened: reading one fails late, or never ends), its
// status in `info`; else false and `error`.
bool small_regular_file(const std::string& path, const char* what, std::uintmax_t max_bytes,
                        struct stat& info, std::string& error) {
  if (stat(path.c_str(), &info) != 0) {
    error = std::string("cannot read ") + what + " " + path + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(info.st_mode)) {
    error = std::string(what) + " " + path + " is not a regular file";
    return false;
  }
  if (static_cast<std::uintmax_t>(info.st_size) > max_bytes) {
    error = std::string(what) + " " + path + " is " + std::to_string(info.st_size) +
            " bytes; expected at most " + std::to_string(max_bytes);
    return false;
  }
  return true;
}

// A key file: small (a line), regular, and private to its owner; else `error`.
bool private_file(const std::string& path, const char* what, std::string& error) {
  struct stat info {};
  if (!small_regular_file(path, what, 4096, info, error)) return false;
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    error = std::string(what) + " " + path + " is readable by group or others (chmod 600 it)";
    return false;
  }
  return true;
}

std::array<std::uint8_t, 32> signed_message_hash(std::span<const std::uint8_t> transcript_hash) {
  std::array<std::uint8_t, 32> hash{};
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, hash.size());
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(kMemberSignatureLabel),
                            sizeof kMemberSignatureLabel);
  crypto_generichash_update(&state, transcript_hash.data(), transcript_hash.size());
  crypto_generichash_final(&state, hash.data(), hash.size());
  return hash;
}

std::array<std::uint8_t, 12> counter_nonce(std::uint64_t counter) {
  std::array<std::uint8_t, 12> nonce{};
  for (int i = 0; i < 8; ++i) nonce[4 + i] = static_cast<std::uint8_t>(counter >> (56 - 8 * i));
  return nonce;
}

std::array<std::uint8_t, 16> flow_fields(std::uint64_t flow, std::uint64_t size_bytes) {
  std::vector<std::uint8_t> bytes;
  ByteWriter w(bytes);
  w.u64(flow);
  w.u64(size_bytes);
  std::array<std::uint8_t, 16> out{};
  std::copy(bytes.begin(), bytes.end(), out.begin());
  return out;
}

}  // namespace

std::optional<JobKey> read_job_key_file(const std::string& path, std::string& error) {
  if (!private_file(path, "job key file", error)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::optional<JobKey> key = parse_key(text, error);
  if (!key) error = "job key file " + path + ": " + error;
  return key;
}

std::optional<JobKey> job_key_from_environment(std::string& error) {
  error.clear();
  if (const char* hex = std::getenv(kJobKeyVariable); hex != nullptr && *hex != '\0') {
    std::optional<JobKey> key = parse_key(hex, error);
    if (!key) error = std::string(kJobKeyVariable) + ": " + error;
    return key;
  }
  if (const char* path = std::getenv(kJobKeyFileVariable); path != nullptr && *path != '\0') {
    return read_job_key_file(path, error);
  }
  return std::nullopt;
}

MemberKey member_key_from_seed(const std::string& name,
                               const std::array<std::uint8_t, kMemberSeedBytes>& seed) {
  ensure_sodium();
  MemberKey key;
  key.name = name;
  crypto_sign_seed_keypair(key.public_key.data(), key.secret.data(), seed.data());
  return key;
}

MemberKey generate_member_key(const std::string& name) {
  std::array<std::uint8_t, kMemberSeedBytes> seed{};
  ensure_sodium();
  randombytes_buf(seed.data(), seed.size());
  MemberKey key = member_key_from_seed(name, seed);
  sodium_memzero(seed.data(), seed.size());
  return key;
}

std::string member_key_line(const MemberKey& key) {
  return key.name + " " + hex(std::span(key.secret).first(kMemberSeedBytes));
}

std::string roster_line(const MemberKey& key) { return key.name + " " + hex(key.public_key); }

std::optional<MemberKey> read_member_key_file(const std::string& path, std::string& error) {
  if (!private_file(path, "member key file", error)) return std::nullopt;
  std::ifstream in(path);
  std::string name, seed_text, extra;
  in >> name >> seed_text >> extra;
  std::array<std::uint8_t, kMemberSeedBytes> seed{};
  if (!wire::valid_member_name(name) || !parse_hex32(seed_text, seed) || !extra.empty()) {
    error = "member key file " + path +
            ": expected one line NAME SEED (a name of 1-64 [A-Za-z0-9._-], 64 hex digits)";
    return std::nullopt;
  }
  MemberKey key = member_key_from_seed(name, seed);
  sodium_memzero(seed.data(), seed.size());
  return key;
}

std::optional<Roster> read_roster_file(const std::string& path, std::string& error) {
  // A line per member: 16 MiB is far beyond any job's roster.
  struct stat info {};
  if (!small_regular_file(path, "roster file", std::uintmax_t{16} << 20, info, error)) {
    return std::nullopt;
  }
  std::ifstream in(path);
  if (!in) {
    error = "cannot read roster file " + path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  Roster roster;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream fields(line);
    std::string name, key_text, job, extra;
    fields >> name >> key_text >> job >> extra;
    if (name.empty() || name.front() == '#') continue;
    const std::string where = "roster file " + path + " line " + std::to_string(number) + ": ";
    RosterEntry entry;
    if (!wire::valid_member_name(name) || !parse_hex32(key_text, entry.public_key) ||
        (!job.empty() && !wire::valid_member_name(job)) || !extra.empty()) {
      error =
          where + "expected NAME PUBLIC-KEY [JOB] (names of 1-64 [A-Za-z0-9._-], 64 hex digits)";
      return std::nullopt;
    }
    entry.job = job;
    if (!roster.emplace(name, entry).second) {
      error = where + "member " + name + " listed twice";
      return std::nullopt;
    }
  }
  if (roster.empty()) {
    error = "roster file " + path + " lists no member";
    return std::nullopt;
  }
  return roster;
}

wire::Nonce random_nonce() {
  ensure_sodium();
  wire::Nonce nonce{};
  randombytes_buf(nonce.data(), nonce.size());
  return nonce;
}

SessionCrypto::SessionCrypto(const JobKey& job_key, Role role,
                             std::span<const std::uint8_t> initiator_hello,
                             std::span<const std::uint8_t> responder_hello) {
  ensure_sodium();
  // The transcript: both Hellos as sent, initiator's first.
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, transcript_hash_.size());
  crypto_generichash_update(&state, initiator_hello.data(), initiator_hello.size());
  crypto_generichash_update(&state, responder_hello.data(), responder_hello.size());
  crypto_generichash_final(&state, transcript_hash_.data(), transcript_hash_.size());
  // The session's master key: keyed BLAKE2b of the transcript under the job key.
  Key master{};
  crypto_generichash(master.data(), master.size(), transcript_hash_.data(), transcript_hash_.size(),
                     job_key.data(), job_key.size());
  const bool initiator = role == Role::kInitiator;
  // Ours for what this side sends, theirs for what it checks.
  auto derive = [&](Key& ours, Key& theirs, Purpose purpose) {
    crypto_kdf_derive_from_key(ours.data(), ours.size(), subkey_id(purpose, initiator), kKdfContext,
                               master.data());
    crypto_kdf_derive_from_key(theirs.data(), theirs.size(), subkey_id(purpose, !initiator),
                               kKdfContext, master.data());
  };
  derive(send_key_, receive_key_, kSeal);
  derive(own_proof_key_, peer_proof_key_, kProof);
  derive(own_token_key_, peer_token_key_, kToken);
  sodium_memzero(master.data(), master.size());
}

SessionCrypto::~SessionCrypto() {
  for (Key* key : {&send_key_, &receive_key_, &own_proof_key_, &peer_proof_key_, &own_token_key_,
                   &peer_token_key_}) {
    sodium_memzero(key->data(), key->size());
  }
}

wire::Proof SessionCrypto::own_proof() const {
  wire::Proof proof{};
  crypto_auth(proof.data(), transcript_hash_.data(), transcript_hash_.size(),
              own_proof_key_.data());
  return proof;
}

bool SessionCrypto::verify_peer_proof(const wire::Proof& proof) const {
  return crypto_auth_verify(proof.data(), transcript_hash_.data(), transcript_hash_.size(),
                            peer_proof_key_.data()) == 0;
}

wire::Signature SessionCrypto::member_signature(const MemberKey& member) const {
  const auto message = signed_message_hash(transcript_hash_);
  wire::Signature signature{};
  crypto_sign_detached(signature.data(), nullptr, message.data(), message.size(),
                       member.secret.data());
  return signature;
}

bool SessionCrypto::verify_member_signature(const MemberPublicKey& key,
                                            const wire::Signature& signature) const {
  const auto message = signed_message_hash(transcript_hash_);
  return crypto_sign_verify_detached(signature.data(), message.data(), message.size(),
                                     key.data()) == 0;
}

std::uint64_t SessionCrypto::connection_id() const {
  std::uint64_t id = 0;
  for (int i = 0; i < 8; ++i) id = (id << 8) | transcript_hash_[static_cast<std::size_t>(i)];
  return id;
}

void SessionCrypto::seal(std::span<const std::uint8_t> plain, std::vector<std::uint8_t>& out) {
  const auto nonce = counter_nonce(send_counter_++);
  const std::size_t at = out.size();
  out.resize(at + plain.size() + crypto_aead_chacha20poly1305_ietf_ABYTES);
  unsigned long long written = 0;
  crypto_aead_chacha20poly1305_ietf_encrypt(out.data() + at, &written, plain.data(), plain.size(),
                                            nullptr, 0, nullptr, nonce.data(), send_key_.data());
  out.resize(at + static_cast<std::size_t>(written));
}

bool SessionCrypto::open(std::span<const std::uint8_t> sealed, std::vector<std::uint8_t>& plain) {
  if (sealed.size() < crypto_aead_chacha20poly1305_ietf_ABYTES) return false;
  const auto nonce = counter_nonce(receive_counter_);
  plain.resize(sealed.size() - crypto_aead_chacha20poly1305_ietf_ABYTES);
  unsigned long long length = 0;
  if (crypto_aead_chacha20poly1305_ietf_decrypt(plain.data(), &length, nullptr, sealed.data(),
                                                sealed.size(), nullptr, 0, nonce.data(),
                                                receive_key_.data()) != 0) {
    return false;
  }
  plain.resize(static_cast<std::size_t>(length));
  ++receive_counter_;
  return true;
}

wire::Token SessionCrypto::own_flow_token(std::uint64_t flow, std::uint64_t size_bytes) const {
  const auto fields = flow_fields(flow, size_bytes);
  wire::Token token{};
  crypto_auth(token.data(), fields.data(), fields.size(), own_token_key_.data());
  return token;
}

bool SessionCrypto::verify_peer_flow_token(std::uint64_t flow, std::uint64_t size_bytes,
                                           const wire::Token& token) const {
  const auto fields = flow_fields(flow, size_bytes);
  return crypto_auth_verify(token.data(), fields.data(), fields.size(), peer_token_key_.data()) ==
         0;
}

}  // namespace safs::runtime
