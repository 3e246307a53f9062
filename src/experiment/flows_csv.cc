#include "experiment/flows_csv.h"

#include <charconv>
#include <cstdio>

#include "workload/csv_text.h"

namespace safs {

const std::string& flows_csv_header() {
  static const std::string header =
      "id,src,dst,size_bytes,start_s,finish_s,fct_s,ideal_fct_s,slowdown,deadline_s,"
      "met_deadline,class,delivered_bytes,data_packets,control_packets\n";
  return header;
}

namespace {

template <typename Integer>
void append_integer(std::string& out, Integer value) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
  out.append(buf, end);
}

}  // namespace

// Appends field by field: the line is built once per flow, millions of times
// in a large run, so it makes no temporary strings.
void append_flows_csv_line(std::string& out, const FlowRecord& r) {
  const auto integer = [&out](auto value) {
    append_integer(out, value);
    out += ',';
  };
  const auto seconds = [&out](TimePs t) {
    append_seconds(out, t);
    out += ',';
  };
  const FlowSpec& f = r.spec;
  integer(f.id);
  integer(f.src);
  integer(f.dst);
  integer(f.size_bytes);
  seconds(f.start_ps);
  if (r.complete()) {
    seconds(r.finish_ps);
    seconds(r.fct_ps());
    seconds(r.ideal_fct_ps);
    char slow[32];
    const int n = std::snprintf(slow, sizeof slow, "%.6f", r.slowdown());
    out.append(slow, static_cast<std::size_t>(n));
    out += ',';
  } else {
    out += ",,";
    seconds(r.ideal_fct_ps);
    out += ',';
  }
  if (f.has_deadline()) {
    append_seconds(out, f.deadline_ps);
    out += r.met_deadline() ? ",true," : ",false,";
  } else {
    out += ",,";
  }
  out += to_string(f.flow_class);
  out += ',';
  integer(r.delivered_bytes);
  integer(r.data_packets);
  append_integer(out, r.control_packets);
  out += '\n';
}

}  // namespace safs
