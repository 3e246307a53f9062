// safs._sim: the C++ half of `import safs` (the simulator). Thin wrappers
// over what safs-sim's commands use, so a scenario is checked with the same
// messages and a run produces the same files; safs/sim.py builds the Python
// API (Scenario, Run, sweep) on these functions.
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "console/bad_input.h"
#include "console/scenario_file.h"
#include "experiment/experiment.h"
#include "python_workload.h"
#include "run_in_memory.h"
#include "scenario/scenario.h"
#include "scenario_value.h"
#include "sweep/sweep.h"
#include "version/version.h"

namespace py = pybind11;

namespace safs::python {

namespace {

// What the CLI rejects with exit 2 (a bad scenario, a bad option value)
// reaches Python as one exception type, ScenarioError.
template <class F>
auto reported(F&& f) {
  try {
    return f();
  } catch (const console::BadInput& e) {
    throw ScenarioError(e.what());
  }
}

// The file's text, after checking it loads with `overrides` as `run` would.
std::pair<std::string, std::vector<std::string>> read_scenario_file(
    const std::string& path, const std::vector<std::string>& overrides) {
  return reported([&] {
    console::check_scenario_file(path);
    ScenarioNotes notes;
    load_scenario(path, overrides, &notes);
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return std::pair{text.str(), notes.warnings};
  });
}

std::vector<std::string> check_scenario(const std::string& text, const std::string& name,
                                        const std::vector<std::string>& overrides) {
  return reported([&] {
    ScenarioNotes notes;
    parse_scenario(text, name, overrides, &notes);
    return notes.warnings;
  });
}

// `workloads`: safs.Workload objects, run beside the scenario's workloads.
// The GIL is released but for their callbacks; the first exception one
// raises stops the run and is raised here.
RunFiles run(RunRequest request, const py::list& workloads) {
  const auto error = std::make_shared<CallbackError>();
  std::vector<PythonWorkloadSpec> specs;
  for (const py::handle w : workloads) {
    specs.push_back(
        {w.ptr(), py::str(py::type::of(w).attr("__name__")).cast<std::string>(), error});
  }
  if (!specs.empty()) {
    request.add_workloads = [&specs](ExperimentConfig& config) {
      for (const PythonWorkloadSpec& spec : specs) config.workloads.add(spec);
    };
  }
  RunFiles files;
  {
    py::gil_scoped_release unlocked;
    files = reported([&] { return run_in_memory(request); });
  }
  if (error->error) std::rethrow_exception(error->error);
  return files;
}

int sweep(sweep::SweepOptions options, int verbosity) {
  options.verbosity = static_cast<console::Verbosity>(verbosity);
  py::gil_scoped_release unlocked;
  return reported([&] { return sweep::run_sweep(options); });
}

}  // namespace

}  // namespace safs::python

PYBIND11_MODULE(_sim, m) {
  using namespace safs::python;
  m.doc() = "The C++ half of the safs simulator API; use the safs package, not this module.";
  py::object error =
      py::register_exception<safs::ScenarioError>(m, "ScenarioError", PyExc_ValueError);
  error.attr("__doc__") =
      "A scenario (or an option) the simulator rejects: the message names the key, and for a "
      "file the file and line, as safs-sim reports it.";

  m.def("version", &safs::version);
  m.def("source_commit", &safs::source_commit);
  m.def("read_scenario_file", &read_scenario_file, py::arg("path"), py::arg("overrides"));
  m.def("check_scenario", &check_scenario, py::arg("text"), py::arg("name"), py::arg("overrides"));
  m.def("toml_document", &toml_document, py::arg("scenario"));
  m.def("toml_value", &toml_value, py::arg("key"), py::arg("value"));
  m.def(
      "run",
      [](std::string text, std::string name, std::vector<std::string> overrides,
         double queue_sample_us, std::vector<std::string> command_line, py::list workloads) {
        const RunFiles result = run({std::move(text),
                                     std::move(name),
                                     std::move(overrides),
                                     queue_sample_us,
                                     std::move(command_line),
                                     {}},
                                    workloads);
        return py::make_tuple(result.files, result.warnings);
      },
      py::arg("text"), py::arg("name"), py::arg("overrides"), py::arg("queue_sample_us"),
      py::arg("command_line"), py::arg("workloads") = py::list());
  bind_workload_context(m);
  m.def(
      "sweep",
      [](std::string file, std::vector<std::string> grid, std::vector<std::string> overrides,
         std::vector<std::string> metrics, std::string out_dir, int jobs, std::string executable,
         int verbosity) {
        safs::sweep::SweepOptions o;
        o.file = std::move(file);
        o.grid = std::move(grid);
        o.overrides = std::move(overrides);
        o.metrics = std::move(metrics);
        o.out_dir = std::move(out_dir);
        o.jobs = jobs;
        o.executable = std::move(executable);
        return sweep(std::move(o), verbosity);
      },
      py::arg("file"), py::arg("grid"), py::arg("overrides"), py::arg("metrics"),
      py::arg("out_dir"), py::arg("jobs"), py::arg("executable"), py::arg("verbosity"));
}
