// An epoll loop: file descriptors with handlers, and a thread-safe wake-up
// with a task queue so other threads can hand work to the loop's thread.
// Timers are the owner's business: it passes the wait to run_once().
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace safs::runtime {

class EventLoop {
 public:
  using Handler = std::function<void(std::uint32_t events)>;

  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Level-triggered interest in `events` (EPOLLIN, EPOLLOUT).
  void add(int fd, std::uint32_t events, Handler handler);
  void modify(int fd, std::uint32_t events);
  // Forgets the fd (before the caller closes it); safe inside a handler.
  void remove(int fd);
  // Forgets and closes `fd` if open (>= 0), and sets it to -1.
  void remove_and_close(int& fd);

  // Waits at most `max_wait_ns` (0: poll) and runs the handlers that are ready
  // and the tasks posted meanwhile.
  void run_once(std::int64_t max_wait_ns);
  // Thread-safe: runs `task` on the loop's thread at its next iteration.
  void post(std::function<void()> task);

 private:
  struct Registration {
    std::uint32_t generation = 0;
    Handler handler;
  };
  void run_posted();

  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::uint32_t next_generation_ = 1;
  std::unordered_map<int, Registration> registrations_;
  std::mutex posted_mutex_;
  std::vector<std::function<void()>> posted_;
};

}  // namespace safs::runtime
