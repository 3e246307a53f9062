// Python arguments converted by name: pybind's own conversion error names
// no argument and prints every argument's repr (a megabyte buffer's too),
// and it takes a bool or None where an int or a bool goes.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>

namespace safs::python {

namespace py = pybind11;

// An integer argument (an int or anything with __index__, such as numpy's,
// but not a bool) within [lo, hi], else TypeError or ValueError naming it.
template <typename T>
T int_arg(const py::handle& value, const char* name, T lo, T hi) {
  if (py::isinstance<py::bool_>(value) || PyIndex_Check(value.ptr()) == 0) {
    throw py::type_error(std::string(name) + ": expected an int, got " +
                         py::str(py::type::of(value).attr("__name__")).cast<std::string>());
  }
  const py::int_ index = py::reinterpret_steal<py::int_>(PyNumber_Index(value.ptr()));
  if (!index) throw py::error_already_set();
  const auto in_range = [&](int op, T bound) {
    const int result = PyObject_RichCompareBool(index.ptr(), py::int_(bound).ptr(), op);
    if (result < 0) throw py::error_already_set();
    return result == 1;
  };
  if (!in_range(Py_GE, lo) || !in_range(Py_LE, hi)) {
    throw py::value_error(std::string(name) + " " + py::repr(index).cast<std::string>() +
                          ": expected " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  return index.cast<T>();
}
template <typename T>
std::optional<T> optional_int_arg(const py::handle& value, const char* name, T lo, T hi) {
  if (value.is_none()) return std::nullopt;
  return int_arg<T>(value, name, lo, hi);
}

// A time in signed 64-bit nanoseconds (deadline_ns, slack_ns, ...), or None.
inline std::optional<std::int64_t> optional_ns_arg(const py::handle& value, const char* name) {
  return optional_int_arg<std::int64_t>(value, name, INT64_MIN, INT64_MAX);
}
inline constexpr std::uint64_t kU64Max = UINT64_MAX;
inline constexpr std::uint32_t kU32Max = UINT32_MAX;

// numpy's bool scalar (numpy.bool_; named "bool" from numpy 2 on).
inline bool is_numpy_bool(const py::handle& value) {
  const py::handle type = py::type::of(value);
  const std::string name = py::str(type.attr("__name__")).cast<std::string>();
  return (name == "bool_" || name == "bool") && py::hasattr(type, "__module__") &&
         py::str(type.attr("__module__")).cast<std::string>() == "numpy";
}

// A bool argument: True or False (numpy's too), not None or another type,
// which pybind would take as False or by their truth.
inline bool bool_arg(const py::handle& value, const char* name) {
  if (py::isinstance<py::bool_>(value) || is_numpy_bool(value)) {
    return PyObject_IsTrue(value.ptr()) == 1;
  }
  throw py::type_error(std::string(name) + ": expected a bool, got " +
                       py::str(py::type::of(value).attr("__name__")).cast<std::string>());
}

// A real-number argument (an int or a float, numpy's too; not a bool),
// finite and within [lo, hi] (`range` says so in words, e.g. "0 to 1e12"),
// else TypeError or ValueError naming it.
inline double real_arg(const py::handle& value, const char* name, double lo, double hi,
                       const char* range) {
  if (py::isinstance<py::bool_>(value) || PyNumber_Check(value.ptr()) == 0 ||
      PyComplex_Check(value.ptr()) != 0) {
    throw py::type_error(std::string(name) + ": expected a number, got " +
                         py::str(py::type::of(value).attr("__name__")).cast<std::string>());
  }
  const double number = PyFloat_AsDouble(value.ptr());
  if (number == -1.0 && PyErr_Occurred() != nullptr) throw py::error_already_set();
  if (!(number >= lo && number <= hi)) {  // NaN fails both
    throw py::value_error(std::string(name) + " must be " + range + ", got " +
                          py::repr(py::float_(number)).cast<std::string>());
  }
  return number;
}

}  // namespace safs::python
