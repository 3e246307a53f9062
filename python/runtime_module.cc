// safs._runtime: the C++ half of `safs.runtime` (SAFS on real hosts,
// docs/runtime.md). One Python Endpoint wraps one safs::runtime::Endpoint:
//
// - Driving. start() runs the endpoint's loop on a thread of its own; every
//   call then runs on that thread through Endpoint::post() (the C++
//   threading contract: one driving thread, post() thread-safe). Before
//   start(), progress() drives it from the calling thread and calls run
//   directly; a mutex keeps two Python threads from driving it at once.
// - Buffers. send() and recv_into() take any C- or Fortran-contiguous
//   buffer (bytes, bytearray, memoryview, numpy arrays) without copying;
//   the exported view, and so the object, is held until the transfer ends
//   (by the endpoint as well as the handle, so dropping a handle early
//   cannot free bytes the endpoint still reads or fills).
// - The GIL is released while waiting, progressing and hopping to the loop.
// - Completions. The loop drains the C++ completion descriptor after each
//   turn, wakes wait()ers and signals fileno(), an eventfd of this wrapper's
//   own (so a Python selector and wait() do not race to reset one counter).
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "arguments.h"
#include "runtime/clock.h"
#include "runtime/endpoint.h"
#include "runtime/security.h"

namespace py = pybind11;

namespace safs::python {
namespace {

using runtime::Endpoint;
using runtime::EndpointConfig;
using runtime::FlowHint;
using runtime::FlowState;
using runtime::PeerAddress;

// A failed send or receive; Python's safs.runtime.TransferError.
class TransferFailed : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A contiguous view of a Python buffer, released with the GIL held.
class HeldBuffer {
 public:
  HeldBuffer(const py::object& object, bool writable) {
    const int flags = PyBUF_ANY_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object.ptr(), &view_, flags) != 0) {
      const py::error_already_set error;
      throw py::buffer_error(std::string(error.what()) + " (" +
                             (writable ? "recv_into needs a writable" : "send needs a") +
                             " contiguous buffer)");
    }
  }
  ~HeldBuffer() { PyBuffer_Release(&view_); }
  HeldBuffer(const HeldBuffer&) = delete;
  HeldBuffer& operator=(const HeldBuffer&) = delete;
  std::byte* data() const { return static_cast<std::byte*>(view_.buf); }
  std::size_t size() const { return static_cast<std::size_t>(view_.len); }

 private:
  Py_buffer view_{};
};

// One send or posted receive. Touched only with the GIL held.
struct Op {
  bool is_send = true;
  std::uint64_t id = 0;  // FlowHandle or ReceiveHandle
  std::uint64_t tag = 0;
  std::string peer;  // send: to; receive: from (filled in when it ends)
  FlowHint hint;     // send only: what update() changes
  std::unique_ptr<HeldBuffer> buffer;
  std::uint64_t nbytes = 0;
  FlowState state = FlowState::kPending;
  std::string error;
  std::uint64_t bytes = 0;  // received: landed in the buffer; sent: sent
  // The completion generation at which the loop last said it was pending
  // (kNever: not asked yet). Until the next completion it still is.
  static constexpr std::uint64_t kNever = UINT64_MAX;
  std::uint64_t pending_at_generation = kNever;
  // A thread is asking the loop about it (with the GIL released): no other
  // asks meanwhile, since a send's first answer that it ended also lets go
  // of it at the endpoint, and a second would then hear "unknown flow".
  bool asking = false;
};

// What the loop says about an operation.
struct Outcome {
  FlowState state = FlowState::kPending;
  std::string error;
  std::uint64_t bytes = 0;
  std::string peer;
};

// A host name or address: a str without NUL (which the C calls would take
// as its end, so "127.0.0.1\0junk" would reach 127.0.0.1).
std::string host_text(const std::string& text, const char* what) {
  if (text.find('\0') != std::string::npos) {
    throw py::value_error(std::string(what) + ": a NUL character in the host");
  }
  return text;
}

// A (host, port) pair's parts: a str and an int, else TypeError naming `what`
// (pybind's own cast error names no argument).
std::pair<std::string, long long> host_and_port(const py::tuple& pair, const char* what) {
  // An int, or anything with __index__ (numpy integers), but not a bool.
  if (!py::isinstance<py::str>(pair[0]) || py::isinstance<py::bool_>(pair[1]) ||
      PyIndex_Check(pair[1].ptr()) == 0) {
    throw py::type_error(std::string(what) + ": expected (host: str, port: int), got (" +
                         py::str(py::type::of(pair[0]).attr("__name__")).cast<std::string>() +
                         ", " +
                         py::str(py::type::of(pair[1]).attr("__name__")).cast<std::string>() + ")");
  }
  const py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(pair[1].ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long port = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) {
    throw py::value_error(std::string(what) + " port " + py::repr(index).cast<std::string>() +
                          ": expected 0-65535");
  }
  return {host_text(pair[0].cast<std::string>(), what), port};
}

PeerAddress peer_from(const py::object& peer) {
  if (py::isinstance<py::str>(peer)) {
    const std::string text = host_text(peer.cast<std::string>(), "peer");
    if (const auto parsed = PeerAddress::parse(text)) return *parsed;
    throw py::value_error("peer '" + text + "': expected HOST:PORT or (host, port)");
  }
  if (py::isinstance<py::tuple>(peer) && py::len(peer) == 2) {
    const auto [host, port] = host_and_port(peer.cast<py::tuple>(), "peer");
    if (port < 1 || port > 65535) {
      throw py::value_error("peer port " + std::to_string(port) + ": expected 1-65535");
    }
    return {host, static_cast<std::uint16_t>(port)};
  }
  throw py::type_error("peer: expected (host, port) or 'HOST:PORT'");
}

std::int64_t deadline_from(const std::optional<std::int64_t>& deadline_ns,
                           const std::optional<std::int64_t>& slack_ns) {
  if (deadline_ns && slack_ns) throw py::value_error("give deadline_ns or slack_ns, not both");
  // Earlier is as good as this, a deadline long past, and the endpoint's
  // deadline - now cannot overflow from here.
  constexpr std::int64_t kLongPastNs = INT64_MIN / 2;
  if (deadline_ns) return std::max(*deadline_ns, kLongPastNs);
  if (slack_ns) {
    // A slack past the clock's range (sys.maxsize, say) is no deadline.
    std::int64_t deadline = 0;
    if (__builtin_add_overflow(runtime::monotonic_ns(), *slack_ns, &deadline)) {
      return *slack_ns > 0 ? runtime::kNoDeadlineNs : kLongPastNs;
    }
    return std::max(deadline, kLongPastNs);
  }
  return runtime::kNoDeadlineNs;
}

class PyEndpoint : public std::enable_shared_from_this<PyEndpoint> {
 public:
  explicit PyEndpoint(EndpointConfig config)
      : endpoint_(std::make_unique<Endpoint>(std::move(config))),
        signal_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (signal_fd_ < 0) throw std::runtime_error("eventfd unavailable");
    // On the driving thread, without the GIL: held until risks() takes them.
    endpoint_->on_risk([this](const runtime::FlowRisk& risk) {
      std::lock_guard lock(risks_mutex_);
      if (risks_.size() < kMaxHeldRisks) risks_.push_back(risk);
    });
  }
  ~PyEndpoint() {
    close();
    ::close(signal_fd_);
  }

  py::tuple address() const {
    const PeerAddress a = open_endpoint().address();
    return py::make_tuple(a.host, a.port);
  }
  int fileno() const { return signal_fd_; }

  void start() {
    py::gil_scoped_release release;
    std::lock_guard lock(drive_);
    open_endpoint();
    if (running_) throw std::logic_error("the endpoint is already started");
    stop_ = false;
    started_by_ = getpid();
    running_ = true;
    thread_ = std::thread([this] {
      while (!stop_) {
        endpoint_->progress(100 * runtime::kNsPerMs);
        forward_completions();
      }
    });
  }

  void stop() {
    py::gil_scoped_release release;
    std::lock_guard lock(drive_);
    stop_thread();
  }

  // Stops the loop, closes the endpoint's sockets, then lets go of the
  // buffers of what had not ended (failed: "endpoint closed").
  void close() {
    {
      py::gil_scoped_release release;
      std::lock_guard lock(drive_);
      stop_thread();
      endpoint_.reset();
    }
    for (auto& [key, op] : pending_) {
      op->state = FlowState::kFailed;
      op->error = "the endpoint was closed before it ended";
      op->buffer.reset();
    }
    pending_.clear();
  }

  void progress(double max_wait_s) {
    if (!(max_wait_s >= 0)) throw py::value_error("max_wait_s must be 0 or more");
    max_wait_s = std::min(max_wait_s, kLongestWaitS);
    py::gil_scoped_release release;
    std::lock_guard lock(drive_);
    if (running_) {
      throw std::logic_error(
          "the endpoint runs on its own thread (start()); progress() is for "
          "an endpoint not started");
    }
    open_endpoint().progress(static_cast<std::int64_t>(max_wait_s * 1e9));
    forward_completions();
  }

  std::shared_ptr<Op> send(const py::object& buffer, const py::object& peer,
                           std::optional<std::int64_t> deadline_ns,
                           std::optional<std::int64_t> slack_ns, std::uint64_t tag,
                           std::uint64_t group, bool urgent, std::uint32_t criticality) {
    auto op = std::make_shared<Op>();
    op->buffer = std::make_unique<HeldBuffer>(buffer, false);
    op->nbytes = op->buffer->size();
    const PeerAddress to = peer_from(peer);
    op->peer = to.text();
    op->tag = tag;
    op->hint.deadline_ns = deadline_from(deadline_ns, slack_ns);
    op->hint.urgent = urgent;
    op->hint.criticality = criticality;
    op->hint.group = group;
    op->hint.tag = tag;
    const std::span<const std::byte> data(op->buffer->data(), op->buffer->size());
    const FlowHint hint = op->hint;
    op->id = on_loop([&] { return endpoint_->send(to, data, hint); });
    track(op);
    return op;
  }

  // Endpoint::announce_ahead; a refusal raises ValueError with its reason.
  bool announce(std::uint64_t nbytes, const py::object& peer, std::optional<std::int64_t> start_ns,
                std::optional<std::int64_t> starts_in_ns, std::optional<std::int64_t> deadline_ns,
                std::optional<std::int64_t> slack_ns, std::uint64_t group,
                std::uint32_t criticality, std::uint64_t tag) {
    if (start_ns.has_value() == starts_in_ns.has_value()) {
      throw py::value_error("announce: give start_ns or starts_in_ns (one of them)");
    }
    // A day either way: far beyond any schedule, and no overflow below.
    constexpr std::int64_t kDayNs = 86'400 * runtime::kNsPerSecond;
    if (starts_in_ns && (*starts_in_ns < -kDayNs || *starts_in_ns > kDayNs)) {
      throw py::value_error("announce: starts_in_ns is more than a day from now");
    }
    const PeerAddress to = peer_from(peer);
    FlowHint hint;
    hint.deadline_ns = deadline_from(deadline_ns, slack_ns);
    hint.urgent = true;
    hint.criticality = criticality;
    hint.group = group;
    hint.tag = tag;  // names the plan in a risk report (FlowRisk::planned)
    std::string why_not;
    // A relative start is taken on the loop's thread: never in the past there.
    const bool announced = on_loop([&] {
      const std::int64_t start = start_ns ? *start_ns : runtime::monotonic_ns() + *starts_in_ns;
      return endpoint_->announce_ahead(to, nbytes, start, hint, &why_not);
    });
    if (!announced) throw py::value_error("announce: " + why_not);
    return true;
  }

  // False when the send had ended. Started, the loop takes the new hint in
  // its next turn and the caller does not wait for it (a send that ends
  // meanwhile keeps its old one): a pipeline moves every pending send's
  // hint after each op, and waiting for each would cost it a loop hop.
  bool update(const std::shared_ptr<Op>& op, std::optional<std::int64_t> deadline_ns,
              std::optional<std::int64_t> slack_ns, std::optional<bool> urgent) {
    if (!op->is_send) throw py::type_error("update() takes a SendHandle");
    refresh(*op);
    if (op->state != FlowState::kPending) return false;
    if (deadline_ns || slack_ns) op->hint.deadline_ns = deadline_from(deadline_ns, slack_ns);
    if (urgent) op->hint.urgent = *urgent;
    const FlowHint hint = op->hint;
    const std::uint64_t id = op->id;
    queue_on_loop([this, id, hint] { endpoint_->update_hint(id, hint); });
    return true;
  }

  std::shared_ptr<Op> recv_into(const py::object& buffer, std::uint64_t tag,
                                const py::object& peer) {
    auto op = std::make_shared<Op>();
    op->is_send = false;
    op->buffer = std::make_unique<HeldBuffer>(buffer, true);
    op->nbytes = op->buffer->size();
    op->tag = tag;
    std::optional<PeerAddress> from;
    if (!peer.is_none()) from = peer_from(peer);
    const std::span<std::byte> target(op->buffer->data(), op->buffer->size());
    op->id = on_loop([&] { return endpoint_->post_receive(tag, target, from); });
    track(op);
    refresh(*op);  // a late post may have taken a held message at once
    return op;
  }

  // Asks the loop what became of `op`; once it ended, the endpoint forgets it
  // and its buffer is let go. Every end of a send or receive is a completion
  // (Endpoint::completion_fd), counted once the loop's turn is over: while
  // none came since the loop last said `op` was pending, it still is, and
  // the hop to the loop's thread (two thread switches, about 0.1 ms on a
  // busy host, paid per call by a caller polling its sends after each op)
  // is skipped. An end is seen at most one loop turn late; wait() never
  // misses one, because it sleeps until the count moves.
  //
  // Several Python threads may share an endpoint: one asks about an op at a
  // time (Op::asking); another finds it pending meanwhile and looks again.
  void refresh(Op& op) {
    if (op.state != FlowState::kPending || op.asking) return;
    check_same_process();  // before the shortcut, which a child would take
    const std::uint64_t generation = completions_seen();
    if (running_ && op.pending_at_generation == generation) return;
    const bool is_send = op.is_send;
    const std::uint64_t id = op.id;
    const Asking asking({&op});
    const Outcome outcome = on_loop([&] { return outcome_of(is_send, id); });
    apply(op, outcome);
    op.pending_at_generation = generation;
  }

  bool done(const std::shared_ptr<Op>& op) {
    refresh(*op);
    return op->state != FlowState::kPending;
  }

  // Until `op` ends (true) or `timeout_s` passes (false; none: no limit).
  bool wait(const std::shared_ptr<Op>& op, std::optional<double> timeout_s) {
    if (timeout_s && !(*timeout_s >= 0)) throw py::value_error("timeout_s must be 0 or more");
    const auto start = std::chrono::steady_clock::now();
    std::optional<std::chrono::steady_clock::time_point> limit;
    if (timeout_s && *timeout_s < kLongestWaitS) {  // longer: as good as none
      limit = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double>(*timeout_s));
    }
    // Waiting on a receive is the consumer blocking on it: its flow is due
    // now (Endpoint::consumer_waits). Said again at each look, for a flow
    // announced after the wait began, and queued, not waited for (the loop
    // takes it before the flow's next bytes); a zero timeout is a poll, not
    // a wait.
    const bool consumer_blocks = !op->is_send && !(timeout_s && *timeout_s == 0);
    for (;;) {
      const std::uint64_t generation = completions_seen();
      refresh(*op);
      if (op->state != FlowState::kPending) break;
      if (consumer_blocks) {
        const std::uint64_t id = op->id;
        queue_on_loop([this, id] { endpoint_->consumer_waits(id); });
      }
      const auto now = std::chrono::steady_clock::now();
      if (limit && now >= *limit) return false;
      // At most 50 ms between looks, whatever wakes us (or does not).
      auto until = now + std::chrono::milliseconds(50);
      if (limit && *limit < until) until = *limit;
      py::gil_scoped_release release;
      if (running()) {
        std::unique_lock lock(completions_mutex_);
        completions_cv_.wait_until(lock, until,
                                   [&] { return completions_generation_ != generation; });
      } else {
        std::lock_guard lock(drive_);
        const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              until - std::chrono::steady_clock::now())
                              .count();
        open_endpoint().progress(std::max<std::int64_t>(left, 0));
        forward_completions();
      }
    }
    return true;
  }

  void raise_if_failed(const Op& op) const {
    if (op.state != FlowState::kFailed) return;
    throw TransferFailed(describe(op) + " failed: " + op.error);
  }

  static std::string describe(const Op& op) {
    return op.is_send ? "send of " + std::to_string(op.nbytes) + " bytes (tag " +
                            std::to_string(op.tag) + ") to " + op.peer
                      : "receive with tag " + std::to_string(op.tag) + " into " +
                            std::to_string(op.nbytes) + " bytes";
  }

  // The sends reported at risk since the last call, oldest first, and the
  // plans their receivers warned of (FlowRisk::planned).
  py::list risks() {
    std::vector<runtime::FlowRisk> taken;
    {
      std::lock_guard lock(risks_mutex_);
      taken.swap(risks_);
    }
    py::list list;
    for (const runtime::FlowRisk& risk : taken) {
      py::dict d;
      d["flow"] = risk.flow;
      d["tag"] = risk.tag;
      d["reported_at_ns"] = risk.reported_at_ns;
      d["projected_lateness_ns"] = risk.projected_lateness_ns;
      d["rate_bps"] = risk.rate_bps;
      d["needed_bps"] = risk.needed_bps;
      d["planned"] = risk.planned;
      list.append(std::move(d));
    }
    return list;
  }

  py::dict stats() {
    const runtime::EndpointStats s = on_loop([&] { return endpoint_->stats(); });
    py::dict d;
    d["data_bytes_sent"] = s.data_bytes_sent;
    d["data_bytes_received"] = s.data_bytes_received;
    d["control_bytes_sent"] = s.control_bytes_sent;
    d["control_bytes_received"] = s.control_bytes_received;
    d["grants_sent"] = s.grants_sent;
    d["grants_received"] = s.grants_received;
    d["peers"] = s.peers;
    d["incoming_flows"] = s.incoming_flows;
    d["incoming_completed"] = s.incoming_completed;
    d["incoming_failed"] = s.incoming_failed;
    d["refused_flows"] = s.refused_flows;
    d["deadline_misses"] = s.deadline_misses;
    d["consumer_waits"] = s.consumer_waits;
    d["uplink_reports_sent"] = s.uplink_reports_sent;
    d["uplink_reports_received"] = s.uplink_reports_received;
    d["plans_sent"] = s.plans_sent;
    d["flows_on_plans"] = s.flows_on_plans;
    d["plans_dropped"] = s.plans_dropped;
    d["plans_received"] = s.plans_received;
    d["plans_infeasible"] = s.plans_infeasible;
    d["plan_warnings_sent"] = s.plan_warnings_sent;
    d["plan_warnings_received"] = s.plan_warnings_received;
    d["plans_unused"] = s.plans_unused;
    d["plans_warned_late"] = s.plans_warned_late;
    d["plans_warned_on_time"] = s.plans_warned_on_time;
    d["plans_unwarned_late"] = s.plans_unwarned_late;
    d["plans_unwarned_on_time"] = s.plans_unwarned_on_time;
    d["plans_refused"] = s.plans_refused;
    d["unexpected_messages"] = s.unexpected_messages;
    d["unexpected_bytes"] = s.unexpected_bytes;
    d["data_connections_opened"] = s.data_connections_opened;
    d["data_connections_reused"] = s.data_connections_reused;
    d["data_connections_idle"] = s.data_connections_idle;
    d["flows_followed"] = s.flows_followed;
    d["contended_paths"] = s.contended_paths;
    d["idle_restart_warnings"] = s.idle_restart_warnings;
    d["risk_reports"] = s.risk_reports;
    d["shortfall_episodes"] = s.shortfall_episodes;
    const runtime::GrantDelivery& delivery = s.grant_delivery;
    d["grant_delivery_windows"] =
        std::vector<std::uint64_t>(delivery.windows.begin(), delivery.windows.end());
    d["lossy_windows"] = delivery.lossy_windows;
    d["queued_windows"] = delivery.queued_windows;
    d["max_queue_delay_ns"] = delivery.max_queue_delay_ns;
    d["data_connections_kept"] = s.data_connections_kept;
    d["protocol_errors"] = s.protocol_errors;
    d["authentication_failures"] = s.authentication_failures;
    return d;
  }

  bool running() const { return running_; }
  std::size_t pending() const { return pending_.size(); }
  // Calls into the endpoint so far (waited for or queued): what this
  // wrapper costs its caller besides the transfers.
  std::uint64_t loop_calls() const { return loop_calls_; }

 private:
  Endpoint& open_endpoint() const {
    if (!endpoint_) throw std::logic_error("the endpoint is closed");
    check_same_process();
    return *endpoint_;
  }

  // A fork's child has no loop thread: a call handed to it would wait for
  // ever, and a handle's state copied from the parent would never move.
  void check_same_process() const {
    if (running_ && getpid() != started_by_) {
      throw std::logic_error(
          "the endpoint was started in the parent process; after fork() make a new one");
    }
  }

  // Queues `f` for the loop's thread without waiting for it; runs it here
  // when the endpoint is not started (no other thread driving). A close()
  // after it stops the loop first: `f` runs before that or never.
  template <typename F>
  void queue_on_loop(F f) {
    py::gil_scoped_release release;
    std::lock_guard lock(drive_);
    open_endpoint();
    ++loop_calls_;
    if (running_) {
      endpoint_->post(std::move(f));
    } else {
      f();
    }
  }

  // Runs `f` where the endpoint may be driven: on its loop's thread when
  // started, else here (no other thread driving). The GIL is released
  // meanwhile; `f` must not touch Python objects.
  template <typename F>
  auto on_loop(F f) -> decltype(f()) {
    py::gil_scoped_release release;
    std::lock_guard lock(drive_);  // start/stop/close wait for us
    open_endpoint();
    ++loop_calls_;
    if (!running_) return f();
    std::promise<decltype(f())> promise;
    auto future = promise.get_future();
    endpoint_->post([&] {
      try {
        if constexpr (std::is_void_v<decltype(f())>) {
          f();
          promise.set_value();
        } else {
          promise.set_value(f());
        }
      } catch (...) {
        promise.set_exception(std::current_exception());
      }
    });
    return future.get();
  }

  // On the driving thread.
  Outcome outcome_of(bool is_send, std::uint64_t id) {
    Outcome outcome;
    if (is_send) {
      const runtime::FlowStatus status = endpoint_->test(id);
      outcome = {status.state, status.error, status.sent_bytes, {}};
      if (status.state != FlowState::kPending) endpoint_->release(id);
    } else {
      const runtime::ReceiveStatus status = endpoint_->test_receive(id);
      outcome = {status.state, status.error, status.bytes, status.peer};
    }
    return outcome;
  }

  // Marks ops asked about for its life (GIL held at both ends).
  class Asking {
   public:
    explicit Asking(std::vector<Op*> ops) : ops_(std::move(ops)) {
      for (Op* op : ops_) op->asking = true;
    }
    ~Asking() {
      for (Op* op : ops_) op->asking = false;
    }
    Asking(const Asking&) = delete;
    Asking& operator=(const Asking&) = delete;

   private:
    std::vector<Op*> ops_;
  };

  // With the GIL. An op that ended meanwhile (close()) keeps that end.
  void apply(Op& op, const Outcome& outcome) {
    if (op.state != FlowState::kPending) return;
    op.state = outcome.state;
    op.error = outcome.error;
    op.bytes = outcome.bytes;
    if (!op.is_send && !outcome.peer.empty()) op.peer = outcome.peer;
    if (op.state == FlowState::kPending) return;
    op.buffer.reset();  // the endpoint is done with it
    pending_.erase(&op);
  }

  // Holds the op until it ends, and looks at the others held: those that
  // ended meanwhile let go of their buffers even if nobody asks.
  void track(const std::shared_ptr<Op>& op) {
    pending_[op.get()] = op;
    if (++tracked_since_sweep_ < kSweepEvery) return;
    tracked_since_sweep_ = 0;
    // Owned, not borrowed: while the GIL is released another thread may
    // end an op and drop its last handle.
    std::vector<std::pair<bool, std::uint64_t>> ids;
    std::vector<std::shared_ptr<Op>> ops;
    std::vector<Op*> asked;
    for (const auto& [key, held] : pending_) {
      if (held->asking) continue;
      ids.emplace_back(held->is_send, held->id);
      ops.push_back(held);
      asked.push_back(key);
    }
    const Asking asking(std::move(asked));
    const std::vector<Outcome> outcomes = on_loop([&] {
      std::vector<Outcome> all;
      for (const auto& [is_send, id] : ids) all.push_back(outcome_of(is_send, id));
      return all;
    });
    for (std::size_t i = 0; i < ops.size(); ++i) apply(*ops[i], outcomes[i]);
  }

  void stop_thread() {  // drive_ held
    if (!running_) return;
    if (getpid() != started_by_) {
      // A fork's child: the loop's thread is the parent's, not ours to stop
      // or join. Its std::thread is left as it is, unjoined (its storage
      // reused in place, so no destructor ends the process).
      new (&thread_) std::thread();
      running_ = false;
      return;
    }
    stop_ = true;
    endpoint_->post([] {});  // wakes the loop
    thread_.join();
    running_ = false;
  }

  // Moves the endpoint's completion count to waiters and to fileno().
  void forward_completions() {
    std::uint64_t count = 0;
    if (read(endpoint_->completion_fd(), &count, sizeof count) != sizeof count || count == 0) {
      return;
    }
    {
      std::lock_guard lock(completions_mutex_);
      ++completions_generation_;
    }
    completions_cv_.notify_all();
    [[maybe_unused]] const ssize_t n = write(signal_fd_, &count, sizeof count);
  }

  std::uint64_t completions_seen() {
    std::lock_guard lock(completions_mutex_);
    return completions_generation_;
  }

  // Longer waits (inf, 1e300) are taken as this (32 years), far inside
  // what the clocks' nanoseconds hold, so adding one to now cannot overflow.
  static constexpr double kLongestWaitS = 1e9;

  // Held operations are looked at once every this many new ones: the
  // sweep costs one loop hop and a test() each.
  static constexpr std::size_t kSweepEvery = 64;
  std::size_t tracked_since_sweep_ = 0;

  std::unique_ptr<Endpoint> endpoint_;
  int signal_fd_ = -1;
  std::mutex drive_;
  std::thread thread_;
  std::atomic<bool> running_ = false;
  std::atomic<bool> stop_ = false;
  pid_t started_by_ = 0;  // the process whose thread runs the loop
  std::mutex completions_mutex_;
  std::condition_variable completions_cv_;
  std::uint64_t completions_generation_ = 0;
  std::map<Op*, std::shared_ptr<Op>> pending_;  // with the GIL
  std::atomic<std::uint64_t> loop_calls_ = 0;
  // Risk reports not yet taken by risks(); beyond the bound, newer ones are
  // not held (stats()["risk_reports"] and ["plan_warnings_received"] still
  // count them).
  static constexpr std::size_t kMaxHeldRisks = 1024;
  std::mutex risks_mutex_;
  std::vector<runtime::FlowRisk> risks_;
};

// A handle: the operation and the endpoint it runs on.
struct Handle {
  std::shared_ptr<PyEndpoint> endpoint;
  std::shared_ptr<Op> op;
};
struct SendHandle : Handle {};
struct RecvHandle : Handle {};

EndpointConfig make_config(const py::object& listen, double downlink_bps,
                           const std::optional<py::bytes>& job_key,
                           const std::optional<std::string>& job_key_file,
                           bool insecure_loopback_only,
                           const std::optional<std::string>& member_key_file,
                           const std::optional<std::string>& roster_file,
                           std::optional<std::uint64_t> max_unexpected_bytes,
                           std::optional<std::uint64_t> max_unexpected_messages,
                           bool reuse_connections, bool contention_fallback,
                           bool unpaced_connections, bool one_connection, bool judge_by_path_rate,
                           bool edf_when_short, bool slack_adaptive, bool urgent_first,
                           double uplink_bps, bool quiet) {
  EndpointConfig config;
  if (!py::isinstance<py::tuple>(listen) || py::len(listen) != 2) {
    throw py::type_error("listen: expected (host, port)");
  }
  const auto [host, port] = host_and_port(listen.cast<py::tuple>(), "listen");
  if (port < 0 || port > 65535) {
    throw py::value_error("listen port " + std::to_string(port) + ": expected 0-65535");
  }
  config.listen = {host, static_cast<std::uint16_t>(port)};
  config.downlink_bps = downlink_bps;
  runtime::SecurityConfig& security = config.security;
  std::string error;
  if (job_key) {
    const std::string raw = *job_key;
    if (raw.size() != runtime::kJobKeyBytes) {
      throw py::value_error("job_key: expected 32 bytes, got " + std::to_string(raw.size()));
    }
    runtime::JobKey key{};
    std::memcpy(key.data(), raw.data(), key.size());
    security.job_key = key;
  } else if (job_key_file) {
    security.job_key = runtime::read_job_key_file(*job_key_file, error);
    if (!security.job_key) throw py::value_error("job_key_file: " + error);
  } else if (!insecure_loopback_only) {
    security.job_key = runtime::job_key_from_environment(error);
    if (!error.empty()) throw py::value_error(error);
  }
  security.insecure_loopback_only = insecure_loopback_only;
  if (member_key_file) {
    security.member = runtime::read_member_key_file(*member_key_file, error);
    if (!security.member) throw py::value_error("member_key_file: " + error);
  }
  if (roster_file) {
    const auto roster = runtime::read_roster_file(*roster_file, error);
    if (!roster) throw py::value_error("roster_file: " + error);
    security.roster = *roster;
  }
  if (max_unexpected_bytes) config.endpoint_limits.max_unexpected_bytes = *max_unexpected_bytes;
  if (max_unexpected_messages) {
    config.endpoint_limits.max_unexpected_messages = *max_unexpected_messages;
  }
  config.data_reuse.enabled = reuse_connections;
  config.contention_fallback.enabled = contention_fallback;
  config.contention_fallback.unpaced_connections = unpaced_connections;
  config.contention_fallback.one_connection = one_connection;
  config.contention_fallback.judge_by_path_rate = judge_by_path_rate;
  config.shortfall_response.urgent_first = edf_when_short;
  config.scheduler.allocator.slack_adaptive = slack_adaptive;
  config.scheduler.allocator.urgent_first = urgent_first;
  config.uplink.uplink_bps = uplink_bps;
  if (quiet) config.log = [](std::string_view) {};
  return config;
}

// Raises TransferError if it failed, TimeoutError if still pending then.
template <typename H>
py::class_<H> define_handle(py::module_& m, const char* name, const char* doc) {
  return py::class_<H>(m, name, doc)
      .def("done", [](H& h) { return h.endpoint->done(h.op); })
      .def(
          "wait",
          [](H& h, std::optional<double> timeout_s) {
            if (!h.endpoint->wait(h.op, timeout_s)) {
              char seconds[32];
              std::snprintf(seconds, sizeof seconds, "%g", *timeout_s);
              const std::string what =
                  PyEndpoint::describe(*h.op) + " still pending after " + seconds + " s";
              PyErr_SetString(PyExc_TimeoutError, what.c_str());
              throw py::error_already_set();
            }
            h.endpoint->raise_if_failed(*h.op);
          },
          py::arg("timeout_s") = py::none())
      .def_property_readonly("nbytes", [](const H& h) { return h.op->nbytes; })
      .def_property_readonly("tag", [](const H& h) { return h.op->tag; })
      .def_property_readonly("bytes", [](const H& h) { return h.op->bytes; })
      .def_property_readonly("peer", [](const H& h) { return h.op->peer; })
      .def_property_readonly("error", [](const H& h) {
        return h.op->state == FlowState::kFailed ? py::object(py::str(h.op->error)) : py::none();
      });
}

}  // namespace
}  // namespace safs::python

PYBIND11_MODULE(_runtime, m) {
  using namespace safs::python;
  m.doc() = "The C++ half of safs.runtime: SAFS endpoints on real hosts (docs/runtime.md).";
  py::register_exception<TransferFailed>(m, "TransferError", PyExc_RuntimeError);
  m.def("monotonic_ns", &safs::runtime::monotonic_ns,
        "The clock deadlines are on (CLOCK_MONOTONIC, as time.monotonic_ns()).");

  define_handle<SendHandle>(m, "SendHandle", "A send in flight: done(), wait(timeout_s), nbytes.")
      .def_property_readonly(
          "flow", [](const SendHandle& h) { return h.op->id; },
          "The send's number at its endpoint (Endpoint.risks() names sends by it).");
  define_handle<RecvHandle>(
      m, "RecvHandle",
      "A posted receive: done(), wait(timeout_s), nbytes (the buffer's), bytes "
      "(landed), peer (the sender).");

  py::class_<PyEndpoint, std::shared_ptr<PyEndpoint>>(m, "Endpoint")
      .def(py::init([](const py::object& listen, double downlink_bps,
                       const std::optional<py::bytes>& job_key,
                       const std::optional<std::string>& job_key_file, bool insecure_loopback_only,
                       const std::optional<std::string>& member_key_file,
                       const std::optional<std::string>& roster_file,
                       const py::object& max_unexpected_bytes,
                       const py::object& max_unexpected_messages, bool reuse_connections,
                       bool contention_fallback, bool unpaced_connections, bool one_connection,
                       bool judge_by_path_rate, bool edf_when_short, bool slack_adaptive,
                       bool urgent_first, double uplink_bps, bool quiet) {
             EndpointConfig config =
                 make_config(listen, downlink_bps, job_key, job_key_file, insecure_loopback_only,
                             member_key_file, roster_file,
                             optional_int_arg(max_unexpected_bytes, "max_unexpected_bytes",
                                              std::uint64_t{0}, kU64Max),
                             optional_int_arg(max_unexpected_messages, "max_unexpected_messages",
                                              std::uint64_t{0}, kU64Max),
                             reuse_connections, contention_fallback, unpaced_connections,
                             one_connection, judge_by_path_rate, edf_when_short, slack_adaptive,
                             urgent_first, uplink_bps, quiet);
             py::gil_scoped_release release;
             return std::make_shared<PyEndpoint>(std::move(config));
           }),
           py::arg("listen") = py::make_tuple("127.0.0.1", 0), py::kw_only(),
           py::arg("downlink_bps") = 1e9, py::arg("job_key") = py::none(),
           py::arg("job_key_file") = py::none(), py::arg("insecure_loopback_only") = false,
           py::arg("member_key_file") = py::none(), py::arg("roster_file") = py::none(),
           py::arg("max_unexpected_bytes") = py::none(),
           py::arg("max_unexpected_messages") = py::none(), py::arg("reuse_connections") = true,
           py::arg("contention_fallback") = true, py::arg("unpaced_connections") = true,
           py::arg("one_connection") = true, py::arg("judge_by_path_rate") = true,
           py::arg("edf_when_short") = true, py::arg("slack_adaptive") = false,
           py::arg("urgent_first") = false, py::arg("uplink_bps") = 0.0, py::arg("quiet") = false)
      .def_property_readonly("address", &PyEndpoint::address)
      .def("fileno", &PyEndpoint::fileno)
      .def("completion_fd", &PyEndpoint::fileno)
      .def("start", &PyEndpoint::start)
      .def("stop", &PyEndpoint::stop)
      .def("close", &PyEndpoint::close)
      .def("progress", &PyEndpoint::progress, py::arg("max_wait_s") = 0.0)
      .def_property_readonly("running", &PyEndpoint::running)
      .def_property_readonly("pending", &PyEndpoint::pending)
      .def_property_readonly("loop_calls", &PyEndpoint::loop_calls)
      .def("stats", &PyEndpoint::stats)
      .def("risks", &PyEndpoint::risks)
      .def(
          "send",
          [](const std::shared_ptr<PyEndpoint>& self, const py::object& buffer,
             const py::object& peer, const py::object& deadline_ns, const py::object& slack_ns,
             const py::object& tag, const py::object& group, const py::object& urgent,
             const py::object& criticality) {
            return SendHandle{
                {self, self->send(buffer, peer, optional_ns_arg(deadline_ns, "deadline_ns"),
                                  optional_ns_arg(slack_ns, "slack_ns"),
                                  int_arg<std::uint64_t>(tag, "tag", 0, kU64Max),
                                  int_arg<std::uint64_t>(group, "group", 0, kU64Max),
                                  bool_arg(urgent, "urgent"),
                                  int_arg<std::uint32_t>(criticality, "criticality", 0, kU32Max))}};
          },
          py::arg("buffer"), py::arg("peer"), py::kw_only(), py::arg("deadline_ns") = py::none(),
          py::arg("slack_ns") = py::none(), py::arg("tag") = 0, py::arg("group") = 0,
          py::arg("urgent") = true, py::arg("criticality") = 0)
      .def(
          "announce",
          [](const std::shared_ptr<PyEndpoint>& self, const py::object& nbytes,
             const py::object& peer, const py::object& start_ns, const py::object& starts_in_ns,
             const py::object& deadline_ns, const py::object& slack_ns, const py::object& group,
             const py::object& criticality, const py::object& tag) {
            return self->announce(int_arg<std::uint64_t>(nbytes, "nbytes", 0, kU64Max), peer,
                                  optional_ns_arg(start_ns, "start_ns"),
                                  optional_ns_arg(starts_in_ns, "starts_in_ns"),
                                  optional_ns_arg(deadline_ns, "deadline_ns"),
                                  optional_ns_arg(slack_ns, "slack_ns"),
                                  int_arg<std::uint64_t>(group, "group", 0, kU64Max),
                                  int_arg<std::uint32_t>(criticality, "criticality", 0, kU32Max),
                                  int_arg<std::uint64_t>(tag, "tag", 0, kU64Max));
          },
          py::arg("nbytes"), py::arg("peer"), py::kw_only(), py::arg("start_ns") = py::none(),
          py::arg("starts_in_ns") = py::none(), py::arg("deadline_ns") = py::none(),
          py::arg("slack_ns") = py::none(), py::arg("group"), py::arg("criticality") = 0,
          py::arg("tag") = 0)
      .def(
          "update",
          [](const std::shared_ptr<PyEndpoint>& self, SendHandle& handle,
             const py::object& deadline_ns, const py::object& slack_ns, const py::object& urgent) {
            if (handle.endpoint != self) {
              throw py::value_error("update: the send belongs to another endpoint");
            }
            return self->update(
                handle.op, optional_ns_arg(deadline_ns, "deadline_ns"),
                optional_ns_arg(slack_ns, "slack_ns"),
                urgent.is_none() ? std::nullopt : std::optional(bool_arg(urgent, "urgent")));
          },
          py::arg("handle"), py::kw_only(), py::arg("deadline_ns") = py::none(),
          py::arg("slack_ns") = py::none(), py::arg("urgent") = py::none())
      .def(
          "recv_into",
          [](const std::shared_ptr<PyEndpoint>& self, const py::object& buffer,
             const py::object& tag, const py::object& peer) {
            return RecvHandle{
                {self,
                 self->recv_into(buffer, int_arg<std::uint64_t>(tag, "tag", 0, kU64Max), peer)}};
          },
          py::arg("buffer"), py::arg("tag"), py::arg("peer") = py::none());
}
