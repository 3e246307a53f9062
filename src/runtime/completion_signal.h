// An eventfd that becomes readable when a send or a posted receive completes
// or fails, so an event loop outside the endpoint (Python's selectors or
// asyncio, another epoll) can wait on it beside its own descriptors. Each
// completion adds one to the counter; reading the 8-byte counter resets it.
// The reader then asks test() / test_receive() which ones ended.
#pragma once

namespace safs::runtime {

class CompletionSignal {
 public:
  CompletionSignal();  // EFD_NONBLOCK | EFD_CLOEXEC
  ~CompletionSignal();
  CompletionSignal(const CompletionSignal&) = delete;
  CompletionSignal& operator=(const CompletionSignal&) = delete;

  int fd() const { return fd_; }
  void notify();

 private:
  int fd_ = -1;
};

}  // namespace safs::runtime
