// Counters for operators in the Prometheus text exposition format (version
// 0.0.4), served over plain HTTP/1.0 on a local port from the endpoint's own
// event loop: no thread, no dependency. Each scrape reads one request (at
// most 4 KB, within 1 s), answers with the current counters and closes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "runtime/endpoint.h"
#include "runtime/event_loop.h"

namespace safs::runtime {

// The counters as Prometheus text: one `# HELP`, `# TYPE` and sample per counter.
std::string prometheus_text(const EndpointStats& stats);

class MetricsServer {
 public:
  // Listens on `address`; throws when it cannot.
  MetricsServer(EventLoop& loop, const PeerAddress& address, std::function<EndpointStats()> stats);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  PeerAddress address() const { return address_; }
  // Closes scrapes that did not send their request in time.
  void expire(std::int64_t now_ns);

 private:
  struct Scrape {
    std::string request;
    std::int64_t since_ns = 0;
  };
  void on_accept();
  void on_readable(int fd);
  void close_scrape(int fd);

  EventLoop& loop_;
  std::function<EndpointStats()> stats_;
  int listen_fd_ = -1;
  PeerAddress address_;
  std::map<int, Scrape> scrapes_;
};

}  // namespace safs::runtime
