#include "experiment/flows_csv_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <utility>

#include "experiment/flows_csv.h"
#include "experiment/spill_reader.h"

namespace safs {

namespace {

// Lines go to the spill in blocks of about this many bytes.
constexpr std::size_t kSpillBlockBytes = std::size_t{1} << 20;

std::runtime_error io_error(const std::string& what, const std::string& path) {
  return std::runtime_error(path + ": " + what + " (" + std::strerror(errno) + ")");
}

}  // namespace

FlowsCsvFile::FlowsCsvFile(std::string path) : path_(std::move(path)) {
  const std::string spill = path_ + ".spill";
  spill_fd_ = ::open(spill.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (spill_fd_ < 0) throw io_error("cannot create", spill);
  ::unlink(spill.c_str());  // lives while open
  buffer_.reserve(kSpillBlockBytes + 512);
}

FlowsCsvFile::~FlowsCsvFile() {
  if (spill_fd_ >= 0) ::close(spill_fd_);
}

void FlowsCsvFile::add(const FlowRecord& record) {
  line_.clear();
  append_flows_csv_line(line_, record);
  if (line_.size() >= (std::uint64_t{1} << kLengthBits)) {
    throw std::logic_error("flows.csv line longer than 64 KiB");
  }
  const std::uint32_t id = record.spec.id;
  if (place_.size() <= id) place_.resize(id + 1, 0);
  place_[id] = spill_bytes_ << kLengthBits | line_.size();
  spill_bytes_ += line_.size();
  buffer_ += line_;
  ++spilled_;
  if (buffer_.size() >= kSpillBlockBytes) flush();
}

void FlowsCsvFile::flush() {
  const char* data = buffer_.data();
  std::size_t left = buffer_.size();
  while (left > 0) {
    const ssize_t n = ::write(spill_fd_, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw io_error("spill write failed", path_);
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

void FlowsCsvFile::finish(const FlowRecorder& recorder) {
  flush();
  SpillReader spill(spill_fd_, path_);
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(tmp + ": cannot open for writing");
    out << flows_csv_header();
    for (std::uint32_t id = 0; id < recorder.size(); ++id) {
      line_.clear();
      if (const FlowRecord* held = recorder.find(id)) {
        append_flows_csv_line(line_, *held);
      } else {
        const std::uint64_t place = place_.at(id);
        spill.append(line_, place >> kLengthBits, place & ((std::uint64_t{1} << kLengthBits) - 1));
      }
      out << line_;
    }
    out.flush();
    if (!out) throw std::runtime_error(tmp + ": write failed");
  }
  std::filesystem::rename(tmp, path_);
}

}  // namespace safs
