// A workload written in Python (safs.Workload): the run calls the object's
// on_start(ctx) when it starts and on_flow_done(ctx, flow) when one of the
// flows it launched completes, with the GIL taken for each call; through
// ctx the object launches flows and sets timers. It is finished when
// nothing of its own is pending (no flow in flight, no timer set).
#pragma once

#include <pybind11/pybind11.h>

#include <exception>
#include <memory>
#include <string>

#include "workload/workload.h"

namespace safs::python {

// Where a callback's exception waits, with the GIL, to be raised in Python
// once the run returns (the run stops at the first one).
struct CallbackError {
  std::exception_ptr error;
};

// The spec the run's configuration carries. The object is borrowed: the
// Python call that runs the scenario holds it for the run's duration (so
// copying a spec needs no GIL).
struct PythonWorkloadSpec {
  PyObject* object = nullptr;
  std::string name;  // its class's name, for the run's description
  std::shared_ptr<CallbackError> error;
};

std::unique_ptr<Workload> make_workload(const PythonWorkloadSpec& spec, WorkloadHost& host);
std::string describe_workload(const PythonWorkloadSpec& spec);

// Registers the context class (safs._sim.WorkloadContext) on the module.
void bind_workload_context(pybind11::module_& module);

}  // namespace safs::python
