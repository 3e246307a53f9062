#include "python_workload.h"

#include <pybind11/stl.h>

#include <optional>
#include <vector>

#include "arguments.h"
#include "engine/simulator.h"
#include "engine/timer.h"

namespace py = pybind11;

namespace safs::python {

namespace {

class PythonWorkload;

// What a callback gets as `ctx`: the run, seen from the workload. Valid
// only during the run (a context kept past it raises).
struct WorkloadContext {
  PythonWorkload* workload = nullptr;
};

class PythonWorkload final : public Workload {
 public:
  PythonWorkload(const PythonWorkloadSpec& spec, WorkloadHost& host)
      : spec_(spec),
        host_(host),
        object_(py::reinterpret_borrow<py::object>(spec.object)),
        stopper_(host.sim(), [&sim = host.sim()] { sim.stop(); }) {}
  ~PythonWorkload() override {
    // The Python objects it holds (timer callbacks, the context) are released
    // with the GIL; the run itself goes on without it.
    py::gil_scoped_acquire gil;
    timers_.clear();
    if (context_) context_->workload = nullptr;
    context_object_ = py::object();
    object_ = py::object();
  }

  void arm() override {
    py::gil_scoped_acquire gil;
    auto context = std::make_unique<WorkloadContext>(WorkloadContext{this});
    context_ = context.get();
    context_object_ = py::cast(std::move(context));
    call_method("on_start");
  }

  void on_flow_complete(const FlowSpec& flow, TimePs at_ps) override {
    if (flow.id >= mine_.size() || !mine_[flow.id]) return;
    mine_[flow.id] = false;
    --in_flight_;
    py::gil_scoped_acquire gil;
    py::dict done;
    done["id"] = flow.id;
    done["src"] = flow.src;
    done["dst"] = flow.dst;
    done["size_bytes"] = flow.size_bytes;
    done["start_us"] = ps_to_us(flow.start_ps);
    done["finish_us"] = ps_to_us(at_ps);
    call_method("on_flow_done", done);
  }

  bool measured() const override { return true; }
  bool finished() const override { return finished_; }
  std::string unfinished_note() const override {
    return finished_ ? ""
                     : spec_.name +
                           ": the Python workload had flows or timers pending at "
                           "simulation.stop_ms";
  }

  // ctx.launch: a flow from now, measured (the run waits for it).
  std::uint32_t launch(int src, int dst, std::uint64_t size_bytes,
                       std::optional<double> deadline_us, bool urgent) {
    const int hosts = host_.shape().num_hosts;
    for (const int end : {src, dst}) {
      if (end < 0 || end >= hosts) {
        throw py::value_error("launch: host " + std::to_string(end) +
                              " is out of range (the topology has " + std::to_string(hosts) +
                              " hosts)");
      }
    }
    if (src == dst) throw py::value_error("launch: a flow cannot go to its own host");
    if (size_bytes == 0) throw py::value_error("launch: a flow must carry bytes");
    FlowSpec flow;
    flow.src = src;
    flow.dst = dst;
    flow.size_bytes = size_bytes;
    flow.start_ps = now_ps();
    flow.flow_class = urgent ? FlowClass::kUrgent : FlowClass::kBackground;
    if (deadline_us) {
      flow.deadline_ps = us_to_ps(*deadline_us);  // 0 to 1e12, as the scenario's deadline_us
      if (flow.deadline_ps <= flow.start_ps) {
        throw py::value_error("launch: deadline_us must be later than now");
      }
    }
    const std::uint32_t id = host_.launch(flow, FlowTerms{});
    if (mine_.size() <= id) mine_.resize(id + 1, false);
    mine_[id] = true;
    ++in_flight_;
    return id;
  }

  // ctx.after: callback(ctx) `delay_us` from now (0 to 1e12, the binding's
  // check: beyond, now + delay passes int64 picoseconds).
  void after(double delay_us, py::object callback) {
    if (PyCallable_Check(callback.ptr()) == 0) {
      throw py::type_error("after: callback: expected a callable, got " +
                           py::str(py::type::of(callback).attr("__name__")).cast<std::string>());
    }
    // Timers that fired are used again: a workload re-arming one forever
    // holds as many as it has pending, not one per firing.
    PendingTimer* t = nullptr;
    if (!fired_.empty()) {
      t = fired_.back();
      fired_.pop_back();
    } else {
      timers_.push_back(std::make_unique<PendingTimer>());
      t = timers_.back().get();
      t->timer = std::make_unique<Timer>(host_.sim(), [this, t] { fire(t); });
    }
    t->callback = std::move(callback);
    t->timer->arm_in(us_to_ps(delay_us));
    ++timers_pending_;
  }

  TimePs now_ps() const { return host_.sim().now(); }
  int hosts() const { return host_.shape().num_hosts; }

 private:
  struct PendingTimer {
    py::object callback;
    std::unique_ptr<Timer> timer;
  };

  // A fired timer's callback is released, and the timer is free for the
  // next after() once its call has returned.
  void fire(PendingTimer* t) {
    py::gil_scoped_acquire gil;
    const py::object callback = std::move(t->callback);
    --timers_pending_;
    guarded([&] { callback(context_object_); });
    fired_.push_back(t);
  }

  // The object's method `name`, if it has one, with (ctx, args...).
  template <class... Args>
  void call_method(const char* name, const Args&... args) {
    guarded([&] {
      if (py::hasattr(object_, name)) object_.attr(name)(context_object_, args...);
    });
  }

  // Runs a Python call, then checks whether anything is left. The first
  // exception is kept for Python and stops the run.
  template <class F>
  void guarded(F&& f) {
    if (spec_.error->error) return;
    try {
      f();
    } catch (py::error_already_set&) {
      spec_.error->error = std::current_exception();
      finished_ = true;
      // Stops a running simulation now; one not started yet (on_start,
      // called before the run) at its first event.
      host_.sim().stop();
      stopper_.arm_in(0);
      return;
    }
    if (!finished_ && in_flight_ == 0 && timers_pending_ == 0) {
      finished_ = true;
      host_.workload_finished();
    }
  }

  PythonWorkloadSpec spec_;
  WorkloadHost& host_;
  py::object object_;
  WorkloadContext* context_ = nullptr;  // owned by context_object_
  py::object context_object_;
  std::vector<bool> mine_;  // by flow id: launched here and not yet done
  std::size_t in_flight_ = 0;
  std::vector<std::unique_ptr<PendingTimer>> timers_;  // pending or in fired_
  std::vector<PendingTimer*> fired_;                   // free for after()
  std::size_t timers_pending_ = 0;
  bool finished_ = false;
  Timer stopper_;
};

PythonWorkload& live(const WorkloadContext& ctx) {
  if (ctx.workload == nullptr) throw py::value_error("this context's run has ended");
  return *ctx.workload;
}

}  // namespace

std::unique_ptr<Workload> make_workload(const PythonWorkloadSpec& spec, WorkloadHost& host) {
  return std::make_unique<PythonWorkload>(spec, host);
}

std::string describe_workload(const PythonWorkloadSpec& spec) {
  return "a Python workload (" + spec.name + ")";
}

void bind_workload_context(py::module_& m) {
  py::class_<WorkloadContext>(m, "WorkloadContext",
                              "What a safs.Workload's callbacks get: the run, seen from the "
                              "workload (valid during the run only).")
      .def_property_readonly(
          "now_us", [](const WorkloadContext& c) { return ps_to_us(live(c).now_ps()); },
          "The simulated time, in microseconds.")
      .def_property_readonly(
          "hosts", [](const WorkloadContext& c) { return live(c).hosts(); },
          "The topology's hosts (0 .. hosts - 1).")
      .def(
          "launch",
          [](const WorkloadContext& c, const py::object& src, const py::object& dst,
             const py::object& size_bytes, const py::object& deadline_us,
             const py::object& urgent) {
            return live(c).launch(
                int_arg<int>(src, "launch: src", INT32_MIN, INT32_MAX),
                int_arg<int>(dst, "launch: dst", INT32_MIN, INT32_MAX),
                int_arg<std::uint64_t>(size_bytes, "launch: size_bytes", 0, kU64Max),
                deadline_us.is_none() ? std::nullopt
                                      : std::optional(real_arg(deadline_us, "launch: deadline_us",
                                                               0, 1e12, "0 to 1e12")),
                bool_arg(urgent, "launch: urgent"));
          },
          py::arg("src"), py::arg("dst"), py::arg("size_bytes"), py::kw_only(),
          py::arg("deadline_us") = py::none(), py::arg("urgent") = false,
          "Starts a flow of size_bytes from host src to host dst now and returns its id (its "
          "row in flows.csv). deadline_us: the absolute time by which its last byte should "
          "arrive (none by default); urgent: its class (background by default).")
      .def(
          "after",
          [](const WorkloadContext& c, const py::object& delay_us, py::object callback) {
            live(c).after(real_arg(delay_us, "after: delay_us", 0, 1e12, "0 to 1e12"),
                          std::move(callback));
          },
          py::arg("delay_us"), py::arg("callback"), "Calls callback(ctx) delay_us from now.");
}

}  // namespace safs::python
