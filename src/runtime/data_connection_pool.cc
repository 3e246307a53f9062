#include "runtime/data_connection_pool.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace safs::runtime {
namespace {

// The receiver never writes on a data connection: a byte or an end to read
// is its close, which the loop may not have reported yet.
bool still_open(int fd) {
  char probe = 0;
  const ssize_t n = recv(fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

}  // namespace

DataConnectionPool::DataConnectionPool(EventLoop& loop, const DataReuse& config)
    : loop_(loop), config_(config) {}

DataConnectionPool::~DataConnectionPool() {
  for (const Idle& idle : idle_) close(idle.connection.fd);
}

void DataConnectionPool::give(PeerId peer, Connection connection, std::int64_t now_ns) {
  const int fd = connection.fd;
  if (!still_open(fd)) {  // the receiver kept no more of ours
    close(fd);
    return;
  }
  const auto held = std::count_if(idle_.begin(), idle_.end(),
                                  [&](const Idle& idle) { return idle.peer == peer; });
  if (static_cast<std::uint64_t>(held) >= config_.max_idle_per_peer) {
    const auto oldest = std::find_if(idle_.begin(), idle_.end(),
                                     [&](const Idle& idle) { return idle.peer == peer; });
    if (oldest == idle_.end()) {  // max_idle_per_peer is 0: keep none
      close(fd);
      return;
    }
    close_at(static_cast<std::size_t>(oldest - idle_.begin()));
  }
  idle_.push_back({peer, connection, now_ns});
  loop_.add(fd, EPOLLIN | EPOLLRDHUP, [this, fd](std::uint32_t) { on_closed_by_receiver(fd); });
}

DataConnectionPool::Connection DataConnectionPool::take(PeerId peer, Want want) {
  if (want == Want::kPacedFirst) {
    const Connection paced = take_newest(peer, true);
    if (paced.fd >= 0) return paced;
  }
  return take_newest(peer, false);
}

DataConnectionPool::Connection DataConnectionPool::take_newest(PeerId peer, bool kernel_rate_set) {
  for (std::size_t i = idle_.size(); i-- > 0;) {
    if (idle_[i].peer != peer) continue;
    if (idle_[i].connection.kernel_rate_set != kernel_rate_set) continue;
    if (!still_open(idle_[i].connection.fd)) {
      close_at(i);
      continue;
    }
    const Connection connection = idle_[i].connection;
    loop_.remove(connection.fd);
    idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
    return connection;
  }
  return {};
}

void DataConnectionPool::close_peer(PeerId peer) {
  for (std::size_t i = idle_.size(); i-- > 0;) {
    if (idle_[i].peer == peer) close_at(i);
  }
}

void DataConnectionPool::expire(std::int64_t now_ns) {
  for (std::size_t i = idle_.size(); i-- > 0;) {
    if (now_ns - idle_[i].since_ns > config_.idle_timeout_ns) close_at(i);
  }
}

void DataConnectionPool::on_closed_by_receiver(int fd) {
  const auto it = std::find_if(idle_.begin(), idle_.end(),
                               [&](const Idle& idle) { return idle.connection.fd == fd; });
  if (it != idle_.end()) close_at(static_cast<std::size_t>(it - idle_.begin()));
}

void DataConnectionPool::close_at(std::size_t index) {
  int fd = idle_[index].connection.fd;
  loop_.remove_and_close(fd);
  idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(index));
}

}  // namespace safs::runtime
