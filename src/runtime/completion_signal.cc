#include "runtime/completion_signal.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>

namespace safs::runtime {

CompletionSignal::CompletionSignal() : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (fd_ < 0) throw std::runtime_error("eventfd unavailable for the completion descriptor");
}

CompletionSignal::~CompletionSignal() { close(fd_); }

void CompletionSignal::notify() {
  const std::uint64_t one = 1;
  // Fails only with the counter at 2^64 - 2: it is readable then anyway.
  [[maybe_unused]] const ssize_t n = write(fd_, &one, sizeof one);
}

}  // namespace safs::runtime
