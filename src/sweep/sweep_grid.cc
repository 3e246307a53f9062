#include "sweep/sweep_grid.h"

#include <fstream>
#include <set>

#include "console/bad_input.h"
#include "experiment/report.h"

namespace safs::sweep {

namespace {

std::vector<std::string> split_values(const std::string& text) {
  std::vector<std::string> values(1);
  int depth = 0;
  bool quoted = false;
  for (const char c : text) {
    if (c == '"') quoted = !quoted;
    if (!quoted && c == '[') ++depth;
    if (!quoted && c == ']') --depth;
    if (c == ',' && depth == 0 && !quoted) {
      values.emplace_back();
    } else {
      values.back() += c;
    }
  }
  return values;
}

// Whether `key` ends with the whole components `suffix` ("b.c" ends
// "a.b.c" and "b.c", not "ab.c"). A key shorter than the suffix does not.
bool ends_in_components(const std::string& key, const std::string& suffix) {
  if (key.size() < suffix.size()) return false;
  const std::size_t at = key.size() - suffix.size();
  return key.compare(at, suffix.size(), suffix) == 0 && (at == 0 || key[at - 1] == '.');
}

// The last component of the key, or more of it when another axis ends alike;
// "transport" for "transport.name" ("name=dctcp" would say little).
std::string short_key(const std::string& key, const std::vector<GridAxis>& axes) {
  if (key == "transport.name") return "transport";
  for (std::size_t dot = key.rfind('.'); dot != std::string::npos;
       dot = dot == 0 ? std::string::npos : key.rfind('.', dot - 1)) {
    const std::string suffix = key.substr(dot + 1);
    int sharing = 0;
    for (const GridAxis& a : axes) {
      if (ends_in_components(a.key, suffix)) ++sharing;
    }
    if (sharing == 1) return suffix;
  }
  return key;
}

// Values as file-name characters: quotes dropped, anything unusual as '_'.
std::string file_safe(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '"' || c == '\'') continue;
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '-' || c == '+' || c == '_';
    out += plain ? c : '_';
  }
  return out.empty() ? "_" : out;
}

}  // namespace

GridAxis parse_axis(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw console::BadInput("grid axis '" + text + "': expected key=value1,value2,...");
  }
  GridAxis axis{text.substr(0, eq), split_values(text.substr(eq + 1))};
  for (const std::string& v : axis.values) {
    if (v.empty()) throw console::BadInput("grid axis '" + text + "': empty value");
  }
  return axis;
}

void check_distinct_keys(const std::vector<GridAxis>& axes, const std::string& where) {
  for (std::size_t i = 0; i < axes.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (axes[i].key == axes[j].key) {
        throw console::BadInput(where + ": key " + axes[i].key +
                                " given twice; give its values once, as key=v1,v2,...");
      }
    }
  }
}

std::vector<GridAxis> merge_axes(std::vector<GridAxis> axes, const std::vector<GridAxis>& later) {
  for (const GridAxis& axis : later) {
    bool replaced = false;
    for (GridAxis& a : axes) {
      if (a.key == axis.key) {
        a = axis;
        replaced = true;
      }
    }
    if (!replaced) axes.push_back(axis);
  }
  return axes;
}

std::vector<SweepPoint> expand_grid(const std::vector<GridAxis>& axes) {
  std::vector<SweepPoint> points(1);
  for (const GridAxis& axis : axes) {
    std::vector<SweepPoint> next;
    for (const SweepPoint& p : points) {
      for (const std::string& v : axis.values) {
        SweepPoint q = p;
        q.assignments.push_back({axis.key, v});
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }
  std::set<std::string> names;
  for (SweepPoint& p : points) {
    for (const Assignment& a : p.assignments) {
      p.name += (p.name.empty() ? "" : ",") + short_key(a.key, axes) + "=" + file_safe(a.value);
    }
    if (p.name.empty()) p.name = "base";  // no axes: the scenario itself
    if (!names.insert(p.name).second) {
      throw console::BadInput("two grid points would share the directory '" + p.name +
                              "'; make their values differ in letters or digits");
    }
  }
  return points;
}

void write_point_file(const std::string& dir, const SweepPoint& point) {
  std::string text;
  for (const Assignment& a : point.assignments) text += a.override_text() + "\n";
  write_file_atomically(dir + "/point.txt", text);
}

std::vector<Assignment> read_point_file(const std::string& dir) {
  std::vector<Assignment> assignments;
  std::ifstream in(dir + "/point.txt");
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t eq = line.find('=');
    if (eq != std::string::npos) assignments.push_back({line.substr(0, eq), line.substr(eq + 1)});
  }
  return assignments;
}

}  // namespace safs::sweep
