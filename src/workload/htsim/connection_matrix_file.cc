#include "workload/htsim/connection_matrix_file.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "base/input_file.h"

namespace safs {

namespace {

class LineError {
 public:
  LineError(const std::string& name, int line) : where_(name + ":" + std::to_string(line) + ": ") {}
  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument(where_ + what);
  }

 private:
  std::string where_;
};

std::vector<std::string> tokens_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> tokens;
  for (std::string t; in >> t;) tokens.push_back(t);
  return tokens;
}

std::uint64_t whole_number(const std::string& text, const LineError& at, const std::string& what,
                           std::uint64_t max) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value > max) {
    at.fail(what + ": '" + text + "' is not a whole number up to " + std::to_string(max));
  }
  return value;
}

const std::string& next(const std::vector<std::string>& tokens, std::size_t& i,
                        const LineError& at) {
  if (i + 1 >= tokens.size()) at.fail("'" + tokens[i] + "' needs a value");
  return tokens[++i];
}

// Start times are microseconds with a fraction (htsim writes %f).
TimePs start_of(const std::string& text, const LineError& at) {
  double us = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), us);
  if (error != std::errc() || end != text.data() + text.size() || !(us >= 0) || us > 1e12) {
    at.fail("start: '" + text + "' is not a time in microseconds (0 .. 1e12)");
  }
  return us_to_ps(us);
}

constexpr std::uint64_t kMaxId = 0xffffffffu;

CmConnection parse_connection(const std::vector<std::string>& tokens, const LineError& at,
                              int line) {
  CmConnection c;
  c.line = line;
  const std::string& ends = tokens[0];
  const std::size_t arrow = ends.find("->");
  c.src = static_cast<int>(whole_number(ends.substr(0, arrow), at, "source", 65535));
  c.dst = static_cast<int>(whole_number(ends.substr(arrow + 2), at, "destination", 65535));
  bool sized = false;
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    const std::string& key = tokens[i];
    if (key == "start") {
      c.start_ps = start_of(next(tokens, i, at), at);
    } else if (key == "size") {
      c.size_bytes = whole_number(next(tokens, i, at), at, "size", 1'000'000'000'000'000);
      sized = true;
    } else if (key == "trigger") {
      c.trigger =
          static_cast<std::uint32_t>(whole_number(next(tokens, i, at), at, "trigger", kMaxId));
    } else if (key == "send_done_trigger") {
      c.send_done = static_cast<std::uint32_t>(
          whole_number(next(tokens, i, at), at, "send_done_trigger", kMaxId));
    } else if (key == "recv_done_trigger") {
      c.recv_done = static_cast<std::uint32_t>(
          whole_number(next(tokens, i, at), at, "recv_done_trigger", kMaxId));
    } else if (key == "id" || key == "prio") {
      whole_number(next(tokens, i, at), at, key, kMaxId);  // flows are numbered here; see docs
    } else {
      at.fail("unknown token '" + key +
              "' (expected start, size, id, trigger, send_done_trigger, recv_done_trigger or "
              "prio)");
    }
  }
  if (c.src == c.dst) at.fail("a connection from host " + std::to_string(c.src) + " to itself");
  if (!sized || c.size_bytes == 0) {
    at.fail(
        "needs a size in bytes (htsim's size 0, an endless flow, is not modelled: use "
        "[[bulk]] chains for endless traffic)");
  }
  if (c.trigger != 0 && c.start_ps != kTimeNever) {
    at.fail("has both a start time and a trigger");
  }
  if (c.trigger == 0 && c.start_ps == kTimeNever) at.fail("has neither a start time nor a trigger");
  return c;
}

CmTrigger parse_trigger(const std::vector<std::string>& tokens, const LineError& at) {
  CmTrigger t;
  bool typed = false;
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    const std::string& key = tokens[i];
    if (key == "id") {
      t.id = static_cast<std::uint32_t>(whole_number(next(tokens, i, at), at, "id", kMaxId));
    } else if (key == "count") {
      t.count = static_cast<std::uint32_t>(whole_number(next(tokens, i, at), at, "count", kMaxId));
    } else if (key == "oneshot" || key == "multishot" || key == "barrier") {
      if (typed) at.fail("a trigger has one type");
      typed = true;
      t.kind = key == "oneshot"     ? CmTriggerKind::kOneShot
               : key == "multishot" ? CmTriggerKind::kMultiShot
                                    : CmTriggerKind::kBarrier;
    } else {
      at.fail("unknown token '" + key + "' (expected id, oneshot, multishot, barrier or count)");
    }
  }
  if (t.id == 0) at.fail("a trigger needs an id other than 0");
  if (!typed)
    at.fail("trigger " + std::to_string(t.id) + " has no type (oneshot, multishot, barrier)");
  if (t.kind == CmTriggerKind::kBarrier && t.count == 0) {
    at.fail("barrier trigger " + std::to_string(t.id) + " needs a count of at least 1");
  }
  return t;
}

}  // namespace

ConnectionMatrixFile parse_connection_matrix(std::istream& in, const std::string& name) {
  ConnectionMatrixFile file;
  std::map<std::string, std::uint64_t> header;  // declared counts
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    const LineError at(name, line_number);
    const std::vector<std::string> tokens = tokens_of(line);
    if (tokens.empty() || tokens[0][0] == '#') continue;
    const std::string& first = tokens[0];
    if (first == "Nodes" || first == "Connections" || first == "Triggers" || first == "Failures") {
      if (tokens.size() != 2) at.fail(first + " needs one number");
      header[first] = whole_number(tokens[1], at, first, first == "Nodes" ? 65536 : 1e12);
    } else if (first.find("->") != std::string::npos) {
      file.connections.push_back(parse_connection(tokens, at, line_number));
    } else if (first == "trigger") {
      file.triggers.push_back(parse_trigger(tokens, at));
    } else if (first == "failure") {
      at.fail("link failures are not modelled by safs-sim");
    } else {
      at.fail("unknown line starting '" + first +
              "' (expected Nodes, Connections, Triggers, SRC->DST or trigger)");
    }
  }
  const LineError at_end(name, line_number);
  if (header.count("Nodes") == 0) at_end.fail("no 'Nodes N' line");
  file.nodes = static_cast<int>(header["Nodes"]);
  const auto check_count = [&](const char* key, std::size_t actual) {
    if (header.count(key) != 0 && header[key] != actual) {
      at_end.fail(std::string(key) + " " + std::to_string(header[key]) + " declared, " +
                  std::to_string(actual) + " given");
    }
  };
  check_count("Connections", file.connections.size());
  check_count("Triggers", file.triggers.size());
  std::vector<std::uint32_t> ids;
  for (const CmTrigger& t : file.triggers) {
    if (std::find(ids.begin(), ids.end(), t.id) != ids.end()) {
      at_end.fail("trigger " + std::to_string(t.id) + " is defined twice");
    }
    ids.push_back(t.id);
  }
  for (const CmConnection& c : file.connections) {
    const LineError at(name, c.line);
    if (c.src >= file.nodes || c.dst >= file.nodes) {
      at.fail("host " + std::to_string(std::max(c.src, c.dst)) + " is beyond Nodes " +
              std::to_string(file.nodes));
    }
    for (const std::uint32_t t : {c.trigger, c.send_done, c.recv_done}) {
      if (t != 0 && std::find(ids.begin(), ids.end(), t) == ids.end()) {
        at.fail("trigger " + std::to_string(t) + " is referenced but not defined");
      }
    }
  }
  return file;
}

ConnectionMatrixFile load_connection_matrix(const std::string& path) {
  // A line per connection: 1 GiB is tens of millions of them.
  std::ifstream in = open_input_file(path, std::uintmax_t{1} << 30, "an htsim connection matrix");
  return parse_connection_matrix(in, path);
}

}  // namespace safs
