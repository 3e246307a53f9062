#include "experiment/flows_csv.h"

#include <cstdio>

#include "workload/csv_text.h"

namespace safs {

const std::string& flows_csv_header() {
  static const std::string header =
      "id,src,dst,size_bytes,start_s,finish_s,fct_s,ideal_fct_s,slowdown,deadline_s,"
      "met_deadline,class,delivered_bytes,data_packets,control_packets\n";
  return header;
}

void append_flows_csv_line(std::string& out, const FlowRecord& r) {
  const FlowSpec& f = r.spec;
  out += std::to_string(f.id) + ',' + std::to_string(f.src) + ',' + std::to_string(f.dst) + ',' +
         std::to_string(f.size_bytes) + ',' + seconds_text(f.start_ps) + ',';
  if (r.complete()) {
    char slow[32];
    std::snprintf(slow, sizeof slow, "%.6f", r.slowdown());
    out += seconds_text(r.finish_ps) + ',' + seconds_text(r.fct_ps()) + ',' +
           seconds_text(r.ideal_fct_ps) + ',' + slow + ',';
  } else {
    out += ",," + seconds_text(r.ideal_fct_ps) + ",,";
  }
  if (f.has_deadline()) {
    out += seconds_text(f.deadline_ps) + ',' + (r.met_deadline() ? "true" : "false");
  } else {
    out += ',';
  }
  out += ',' + std::string(to_string(f.flow_class)) + ',' + std::to_string(r.delivered_bytes) +
         ',' + std::to_string(r.data_packets) + ',' + std::to_string(r.control_packets) + '\n';
}

}  // namespace safs
