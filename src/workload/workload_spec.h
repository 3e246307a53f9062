// A run's workloads as plain specs, before anything is built. Any value type
// can be a spec: it needs two free functions in its own namespace (found by
// argument-dependent lookup),
//   std::unique_ptr<Workload> make_workload(const Spec&, WorkloadHost&);
//   std::string describe_workload(const Spec&);   // "3 listed flows"
// and WorkloadSpecs keeps specs of any such types, in order, as values
// (copying a configuration copies its specs).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "workload/workload.h"

namespace safs {

class WorkloadSpec {
 public:
  virtual ~WorkloadSpec() = default;
  virtual std::unique_ptr<WorkloadSpec> clone() const = 0;
  virtual std::unique_ptr<Workload> build(WorkloadHost& host) const = 0;
  virtual std::string describe() const = 0;
};

template <class Spec>
class WorkloadSpecOf final : public WorkloadSpec {
 public:
  explicit WorkloadSpecOf(Spec value) : spec(std::move(value)) {}
  std::unique_ptr<WorkloadSpec> clone() const override {
    return std::make_unique<WorkloadSpecOf>(spec);
  }
  std::unique_ptr<Workload> build(WorkloadHost& host) const override {
    return make_workload(spec, host);
  }
  std::string describe() const override { return describe_workload(spec); }

  Spec spec;
};

class WorkloadSpecs {
 public:
  WorkloadSpecs() = default;
  WorkloadSpecs(const WorkloadSpecs& other) { *this = other; }
  WorkloadSpecs& operator=(const WorkloadSpecs& other) {
    if (this == &other) return *this;
    specs_.clear();
    for (const auto& spec : other.specs_) specs_.push_back(spec->clone());
    return *this;
  }
  WorkloadSpecs(WorkloadSpecs&&) = default;
  WorkloadSpecs& operator=(WorkloadSpecs&&) = default;

  // Appends a workload; workloads are built and armed in this order.
  template <class Spec>
  Spec& add(Spec spec) {
    specs_.push_back(std::make_unique<WorkloadSpecOf<Spec>>(std::move(spec)));
    return static_cast<WorkloadSpecOf<Spec>&>(*specs_.back()).spec;
  }
  // The first spec of this type, or null.
  template <class Spec>
  const Spec* find() const {
    for (const auto& spec : specs_) {
      if (const auto* s = dynamic_cast<const WorkloadSpecOf<Spec>*>(spec.get())) return &s->spec;
    }
    return nullptr;
  }
  template <class Spec>
  Spec* find() {
    return const_cast<Spec*>(static_cast<const WorkloadSpecs&>(*this).find<Spec>());
  }
  // Every spec of this type, in order.
  template <class Spec>
  std::vector<const Spec*> all() const {
    std::vector<const Spec*> found;
    for (const auto& spec : specs_) {
      if (const auto* s = dynamic_cast<const WorkloadSpecOf<Spec>*>(spec.get())) {
        found.push_back(&s->spec);
      }
    }
    return found;
  }
  // How many specs of this type.
  template <class Spec>
  std::size_t count() const {
    std::size_t n = 0;
    for (const auto& spec : specs_)
      n += dynamic_cast<const WorkloadSpecOf<Spec>*>(spec.get()) ? 1 : 0;
    return n;
  }
  // The first spec of this type, appended (default-constructed) if there is none:
  // for kinds whose entries accumulate into one workload ([[flows]], [[bulk]]).
  template <class Spec>
  Spec& find_or_add() {
    if (Spec* spec = find<Spec>()) return *spec;
    return add(Spec{});
  }

  // "3 listed flows, a measured Poisson generator" ("no workload" if empty).
  std::string describe() const {
    std::string text;
    for (const auto& spec : specs_) text += (text.empty() ? "" : ", ") + spec->describe();
    return text.empty() ? "no workload" : text;
  }

  bool empty() const { return specs_.empty(); }
  std::size_t size() const { return specs_.size(); }
  const WorkloadSpec& operator[](std::size_t i) const { return *specs_[i]; }

 private:
  std::vector<std::unique_ptr<WorkloadSpec>> specs_;
};

}  // namespace safs
