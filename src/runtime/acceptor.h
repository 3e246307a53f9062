// The listening socket and every accepted connection not yet bound to a peer
// or a flow. An accepted connection's first frame says what it is: a Hello
// makes it a peer's control connection, a DataOpen a flow's data connection.
// A data connection that comes before its peer's Hello or its flow's
// Announce is parked here, unread, until the receive side takes it. The caps
// and the timeout on connections that have not said who they are live here,
// and so do finished flows' data connections kept for their sender's next
// DataOpen (EndpointConfig::data_reuse): known to be their peer's, they are
// exempt from that cap and timeout, bounded per peer instead, and closed with
// the peer's control connection;
// and the handling of running out of file descriptors: a reserve descriptor
// lets it shed a connection instead of spinning on EMFILE, and accepting
// backs off for a while.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/endpoint.h"
#include "runtime/endpoint_config.h"
#include "runtime/event_loop.h"
#include "runtime/wire.h"

namespace safs::runtime {

// An accepted connection whose first frame has not said what it is, or a
// data connection waiting for its flow's announce.
struct UnboundConnection {
  int fd = -1;
  std::vector<std::uint8_t> bytes;  // the first frame, as far as read (never past it)
  std::optional<wire::DataOpen> data_open;
  std::int64_t since_ns = 0;
  // A kept data connection: the control connection whose flows it carried
  // (its next DataOpen must name the same one); 0 for an accepted one.
  std::uint64_t kept_for = 0;
};

class Acceptor {
 public:
  // Where identified connections go; each handler takes the connection over.
  class Events {
   public:
    virtual void on_control_connection(UnboundConnection& connection, const wire::Hello& hello) = 0;
    virtual void on_data_connection(UnboundConnection& connection) = 0;
    // Out of file descriptors: free one elsewhere if possible (true if done).
    virtual bool on_out_of_descriptors() = 0;

   protected:
    ~Events() = default;
  };

  // Listens on config.listen; throws when it cannot.
  Acceptor(EventLoop& loop, const EndpointConfig& config, Events& events);
  ~Acceptor();
  Acceptor(const Acceptor&) = delete;
  Acceptor& operator=(const Acceptor&) = delete;

  PeerAddress address() const { return address_; }

  // Holds a data connection, unread, until take_parked() (closed when its
  // control connection already has as many parked as the limits allow).
  void park(UnboundConnection& connection);
  // The parked connections naming control connection `connection_id` whose
  // flow `announced` says is known.
  std::vector<UnboundConnection> take_parked(
      std::uint64_t connection_id, const std::function<bool(std::uint64_t flow)>& announced);
  // Takes over a finished flow's data connection (registered in the loop or
  // not) to read the next DataOpen of control connection `connection_id` on
  // it; false, and the caller still owns and closes it, when that peer
  // already has PeerLimits::max_idle_data_connections kept, unless a whole
  // DataOpen is waiting on it (a flow that follows: wire::kCapDataFollow),
  // which is read at once.
  bool keep(int fd, std::uint64_t connection_id);
  // Closes the data connections of control connection `connection_id`
  // waiting for their announce, and those kept for it.
  void close_data_connections(std::uint64_t connection_id);

  // Closes the connections that took too long to say what they are.
  void expire(std::int64_t now_ns);
  // Nothing to time out (kept connections wait on their peer, not on a timer).
  bool idle() const { return unbound_.empty() && paused_until_ns_ == 0; }
  void add_stats(EndpointStats& stats) const {
    stats.protocol_errors += stats_.protocol_errors;
    stats.refused_connections += stats_.refused_connections;
    stats.data_connections_kept += kept_.size();
  }

 private:
  void on_accept();
  void on_readable(int fd);
  // Reads the first frame of `connection` (in `table`) and hands it on.
  void read_first_frame(std::map<int, UnboundConnection>& table,
                        std::map<int, UnboundConnection>::iterator it);
  void close_unbound(int fd, const std::string& reason);
  // Closes the oldest unidentified connection; false when there is none.
  bool evict_oldest(const std::string& why);
  void on_out_of_descriptors();

  EventLoop& loop_;
  const EndpointConfig& config_;
  Events& events_;
  int listen_fd_ = -1;
  int reserve_fd_ = -1;               // given up to accept-and-close when out of fds
  std::int64_t paused_until_ns_ = 0;  // accepting backs off until then (0: not paused)
  PeerAddress address_;
  std::map<int, UnboundConnection> unbound_;
  std::map<int, UnboundConnection> kept_;  // kept data connections (kept_for != 0)
  EndpointStats stats_;                    // protocol errors, refused connections
};

}  // namespace safs::runtime
