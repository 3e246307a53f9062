#include "capture/pcap_writer.h"

#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace safs::capture {

namespace {

// The pcap format (draft-ietf-opsawg-pcap): a 24-byte file header, then per
// packet a 16-byte record header and the captured bytes, in the writer's
// byte order, which the magic number tells readers.
constexpr std::uint32_t kNanosecondMagic = 0xa1b23c4d;  // timestamps in ns, not us
constexpr std::uint32_t kLinkTypeEthernet = 1;
constexpr std::uint32_t kSnapLength = 65535;
constexpr std::size_t kBufferBytes = 1 << 20;

struct FileHeader {
  std::uint32_t magic = kNanosecondMagic;
  std::uint16_t version_major = 2;
  std::uint16_t version_minor = 4;
  std::int32_t this_zone = 0;
  std::uint32_t sigfigs = 0;
  std::uint32_t snaplen = kSnapLength;
  std::uint32_t link_type = kLinkTypeEthernet;
};

struct RecordHeader {
  std::uint32_t seconds;
  std::uint32_t nanoseconds;
  std::uint32_t captured_bytes;
  std::uint32_t frame_bytes;
};

}  // namespace

PcapWriter::PcapWriter(std::string path, Layer4 layer4)
    : path_(std::move(path)), partial_path_(path_ + ".partial"), layer4_(layer4) {
  file_ = std::fopen(partial_path_.c_str(), "wb");
  if (file_ == nullptr) {
    throw std::runtime_error("cannot create " + partial_path_ + ": " + std::strerror(errno));
  }
  buffer_.resize(kBufferBytes);
  const FileHeader header;
  append(&header, sizeof header);
}

PcapWriter::~PcapWriter() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::remove(partial_path_.c_str());
  }
}

void PcapWriter::on_transmit(const Port& /*port*/, const Packet& packet, TimePs at) {
  encode_frame(packet, layer4_, frame_);
  const RecordHeader record{static_cast<std::uint32_t>(at / kPsPerSec),
                            static_cast<std::uint32_t>(at % kPsPerSec / kPsPerNs),
                            static_cast<std::uint32_t>(frame_.captured_bytes),
                            static_cast<std::uint32_t>(frame_.frame_bytes)};
  append(&record, sizeof record);
  append(frame_.bytes.data(), frame_.captured_bytes);
  ++packets_;
}

void PcapWriter::append(const void* data, std::size_t bytes) {
  if (used_ + bytes > buffer_.size()) flush();
  std::memcpy(buffer_.data() + used_, data, bytes);
  used_ += bytes;
}

void PcapWriter::flush() {
  if (used_ > 0 && std::fwrite(buffer_.data(), 1, used_, file_) != used_) write_failed_ = true;
  used_ = 0;
}

void PcapWriter::finish() {
  flush();
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (write_failed_ || !closed) {
    std::remove(partial_path_.c_str());
    throw std::runtime_error("writing " + partial_path_ + " failed (is the disk full?)");
  }
  std::filesystem::rename(partial_path_, path_);
}

}  // namespace safs::capture
