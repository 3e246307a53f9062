// Knobs: each configuration key declared once, bound to the struct member it
// sets. A table of knobs yields the key descriptions (validation, reference
// docs) with defaults read from its default struct, and it fills a struct
// from any SectionReader, starting from that default. The default struct is
// a default-constructed one, so member initializers are where a default is
// written; a variant of a table that differs only in some defaults (a
// transport with another default class) derives it with with_defaults().
//
//   KnobTable<WindowConfig> t;
//   t.time("rto_min_us", kPsPerUs, SAFS_FIELD(rto_min_ps), 1, 1e7, "Minimum RTO ...");
//
// Depends on nothing but base/time.h: no file format, simulator or transport.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/time.h"
#include "options/key_spec.h"
#include "options/section_reader.h"

// A generic accessor for the member `path` (which may be nested:
// receiver.allocator.demand.margin) of whatever struct it is given.
#define SAFS_FIELD(path) \
  [](auto& config_) -> auto& { return config_.path; }

namespace safs {

template <class Config>
struct Knob {
  KeySpec spec;  // path = the key inside its section; default filled by describe()
  // The member's value in the key's type and unit.
  std::function<Value(const Config&)> read;
  // Sets the member from a value of the key's type (already validated).
  std::function<void(Config&, const Value&)> write;
};

template <class Config>
class KnobTable {
 public:
  // An integer member of any width.
  template <class Field>
  KnobTable& integer(std::string key, std::string unit, Field field, double min, double max,
                     std::string doc) {
    using T = member_t<Field>;
    return add(
        {key, ValueType::kInteger, unit, {}, doc, false, min, max, {}},
        [field](const Config& c) { return Value{static_cast<std::int64_t>(get(field, c))}; },
        [field](Config& c, const Value& v) {
          field(c) = static_cast<T>(std::get<std::int64_t>(v));
        });
  }
  // A double member, or an optional<double> one (absent: no default).
  template <class Field>
  KnobTable& number(std::string key, std::string unit, Field field, double min, double max,
                    std::string doc) {
    return add(
        {key, ValueType::kFloat, unit, {}, doc, false, min, max, {}},
        [field](const Config& c) { return Value{optional_value(get(field, c))}; },
        [field](Config& c, const Value& v) { field(c) = std::get<double>(v); });
  }
  // An integer member written as a number in a larger unit: `scale` member
  // units per key unit (1e9 for a bit/s member set in Gbit/s, kPsPerUs for a
  // picosecond time set in microseconds), rounded to the nearest. A time of
  // kTimeNever has no default ("none").
  template <class Field>
  KnobTable& scaled(std::string key, std::string unit, double scale, Field field, double min,
                    double max, std::string doc) {
    using T = member_t<Field>;
    return add(
        {key, ValueType::kFloat, unit, {}, doc, false, min, max, {}},
        [field, scale](const Config& c) {
          const T m = get(field, c);
          if constexpr (std::is_same_v<T, TimePs>) {
            if (m == kTimeNever) return Value{};
          }
          return Value{static_cast<double>(m) / scale};
        },
        [field, scale](Config& c, const Value& v) {
          const double x = std::get<double>(v) * scale;
          field(c) = static_cast<T>(x + (x >= 0 ? 0.5 : -0.5));
        });
  }
  // A time in picoseconds set in the unit `ps_per_unit` names ("us": kPsPerUs).
  template <class Field>
  KnobTable& time(std::string key, std::string unit, TimePs ps_per_unit, Field field, double min,
                  double max, std::string doc) {
    return scaled(std::move(key), std::move(unit), static_cast<double>(ps_per_unit), field, min,
                  max, std::move(doc));
  }
  template <class Field>
  KnobTable& flag(std::string key, Field field, std::string doc) {
    return add(
        {key, ValueType::kBoolean, "", {}, doc, false, 0, 1, {}},
        [field](const Config& c) { return Value{static_cast<bool>(get(field, c))}; },
        [field](Config& c, const Value& v) { field(c) = std::get<bool>(v); });
  }
  // A boolean key that picks one of two values of an enum member.
  template <class Field, class Enum>
  KnobTable& toggle(std::string key, Field field, Enum when_false, Enum when_true,
                    std::string doc) {
    return add(
        {key, ValueType::kBoolean, "", {}, doc, false, 0, 1, {}},
        [field, when_true](const Config& c) { return Value{get(field, c) == when_true}; },
        [field, when_false, when_true](Config& c, const Value& v) {
          field(c) = std::get<bool>(v) ? when_true : when_false;
        });
  }
  template <class Field>
  KnobTable& text(std::string key, Field field, std::string doc) {
    return add(
        {key, ValueType::kString, "", {}, doc, false, -kInf, kInf, {}},
        [field](const Config& c) { return Value{get(field, c)}; },
        [field](Config& c, const Value& v) { field(c) = std::get<std::string>(v); });
  }
  // An enum member set by name.
  template <class Field, class Enum>
  KnobTable& choice(std::string key, Field field, std::vector<std::pair<std::string, Enum>> names,
                    std::string doc) {
    std::vector<std::string> words;
    for (const auto& [word, value] : names) words.push_back(word);
    return add(
        {key, ValueType::kString, "", {}, doc, false, -kInf, kInf, words},
        [field, names](const Config& c) {
          for (const auto& [word, value] : names) {
            if (value == get(field, c)) return Value{word};
          }
          return Value{};
        },
        [field, names](Config& c, const Value& v) {
          for (const auto& [word, value] : names) {
            if (word == std::get<std::string>(v)) field(c) = value;
          }
        });
  }
  // A list of host indices into a vector<int> member.
  template <class Field>
  KnobTable& hosts(std::string key, Field field, std::string doc) {
    return add(
        {key, ValueType::kHostList, "host indices", {}, doc, false, 0, 65535, {}},
        [field](const Config& c) {
          std::vector<std::int64_t> list(get(field, c).begin(), get(field, c).end());
          return Value{list};
        },
        [field](Config& c, const Value& v) {
          field(c).clear();
          for (const std::int64_t h : std::get<std::vector<std::int64_t>>(v)) {
            field(c).push_back(static_cast<int>(h));
          }
        });
  }
  // Marks the last knob added as required (its default is not shown).
  KnobTable& required() {
    knobs_.back().spec.required = true;
    return *this;
  }
  // Every knob of `inner`, reaching its struct through `field`. The defaults
  // stay this table's (Config's initializers), not `inner`'s.
  template <class Inner, class Field>
  KnobTable& include(const KnobTable<Inner>& inner, Field field) {
    for (const Knob<Inner>& k : inner.knobs()) {
      knobs_.push_back({k.spec, [field, r = k.read](const Config& c) { return r(get(field, c)); },
                        [field, w = k.write](Config& c, const Value& v) { w(field(c), v); }});
    }
    return *this;
  }
  // Replaces the meaning of `key` (an included knob whose default differs here).
  KnobTable& redoc(const std::string& key, std::string doc) {
    for (Knob<Config>& k : knobs_) {
      if (k.spec.path == key) k.spec.doc = std::move(doc);
    }
    return *this;
  }

  // The same knobs with other defaults: `change` edits a copy of this
  // table's default struct, so each knob stays declared once.
  template <class Change>
  KnobTable with_defaults(Change change) const {
    KnobTable derived = *this;
    change(derived.defaults_);
    return derived;
  }

  const std::vector<Knob<Config>>& knobs() const { return knobs_; }

  // The key descriptions, `prefix` + key, with this table's defaults.
  std::vector<KeySpec> describe(const std::string& prefix) const {
    std::vector<KeySpec> specs;
    for (const Knob<Config>& k : knobs_) {
      KeySpec spec = k.spec;
      spec.path = prefix + spec.path;
      if (!spec.required) spec.default_value = k.read(defaults_);
      specs.push_back(std::move(spec));
    }
    return specs;
  }
  // Sets every member whose key `section` gives; the others keep their value.
  void apply(const SectionReader& section, Config& config) const {
    for (const Knob<Config>& k : knobs_) {
      if (std::optional<Value> v = section.get(k.spec.path, k.spec.type)) k.write(config, *v);
    }
  }
  Config read(const SectionReader& section) const {
    Config config = defaults_;
    apply(section, config);
    return config;
  }

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  template <class Field>
  using member_t =
      std::remove_reference_t<decltype(std::declval<Field>()(std::declval<Config&>()))>;

  // Reads through a mutable accessor without changing anything.
  template <class Field>
  static const auto& get(const Field& field, const Config& c) {
    return field(const_cast<Config&>(c));
  }
  static Value optional_value(double v) { return v; }
  static Value optional_value(const std::optional<double>& v) { return v ? Value{*v} : Value{}; }

  KnobTable& add(KeySpec spec, std::function<Value(const Config&)> read,
                 std::function<void(Config&, const Value&)> write) {
    knobs_.push_back({std::move(spec), std::move(read), std::move(write)});
    return *this;
  }

  std::vector<Knob<Config>> knobs_;
  Config defaults_{};
};

}  // namespace safs
