#include "runtime/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <stdexcept>
#include <utility>

namespace safs::runtime {
namespace {

constexpr std::uint32_t kWakeGeneration = 0;  // registrations start at 1
constexpr int kMaxEventsPerWait = 64;

std::uint64_t pack(int fd, std::uint32_t generation) {
  return (static_cast<std::uint64_t>(generation) << 32) | static_cast<std::uint32_t>(fd);
}

}  // namespace

EventLoop::EventLoop() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) throw std::runtime_error("epoll or eventfd unavailable");
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = pack(wake_fd_, kWakeGeneration);
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &event);
}

EventLoop::~EventLoop() {
  close(wake_fd_);
  close(epoll_fd_);
}

void EventLoop::add(int fd, std::uint32_t events, Handler handler) {
  const std::uint32_t generation = next_generation_++;
  if (next_generation_ == kWakeGeneration) ++next_generation_;
  registrations_[fd] = {generation, std::move(handler)};
  epoll_event event{};
  event.events = events;
  event.data.u64 = pack(fd, generation);
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event);
}

void EventLoop::modify(int fd, std::uint32_t events) {
  const auto it = registrations_.find(fd);
  if (it == registrations_.end()) return;
  epoll_event event{};
  event.events = events;
  event.data.u64 = pack(fd, it->second.generation);
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &event);
}

void EventLoop::remove(int fd) {
  if (registrations_.erase(fd) == 0) return;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
}

void EventLoop::remove_and_close(int& fd) {
  if (fd < 0) return;
  remove(fd);
  close(fd);
  fd = -1;
}

void EventLoop::run_once(std::int64_t max_wait_ns) {
  std::array<epoll_event, kMaxEventsPerWait> events{};
  // Round up so a wait for 0.3 ms is not a busy poll.
  const std::int64_t wait_ms = max_wait_ns <= 0 ? 0 : (max_wait_ns + 999'999) / 1'000'000;
  const int ready = epoll_wait(epoll_fd_, events.data(), kMaxEventsPerWait,
                               static_cast<int>(std::min<std::int64_t>(wait_ms, 1000)));
  for (int i = 0; i < ready; ++i) {
    const int fd = static_cast<int>(events[i].data.u64 & 0xffffffffu);
    const auto generation = static_cast<std::uint32_t>(events[i].data.u64 >> 32);
    if (fd == wake_fd_ && generation == kWakeGeneration) {
      std::uint64_t count = 0;
      while (read(wake_fd_, &count, sizeof count) > 0) {
      }
      continue;
    }
    // A handler earlier in this batch may have removed (and a new socket
    // reused) this fd: the generation tells.
    const auto it = registrations_.find(fd);
    if (it == registrations_.end() || it->second.generation != generation) continue;
    Handler handler = it->second.handler;  // the handler may remove itself
    handler(events[i].events);
  }
  run_posted();
}

void EventLoop::post(std::function<void()> task) {
  {
    std::lock_guard lock(posted_mutex_);
    posted_.push_back(std::move(task));
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto written = write(wake_fd_, &one, sizeof one);
}

void EventLoop::run_posted() {
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard lock(posted_mutex_);
    tasks.swap(posted_);
  }
  for (auto& task : tasks) task();
}

}  // namespace safs::runtime
