#include "timeline/trace_tracks.h"

namespace safs::timeline {

namespace {

// pid 0 is left out: some viewers treat it as "no process".
int host_pid(int host) { return host + 1; }

constexpr int kComputeTid = 1;
constexpr int kGrantsTid = 2;
constexpr int kFirstLaneTid = 3;

}  // namespace

TraceTracks::TraceTracks(trace::ChromeTraceWriter& writer, int num_hosts)
    : writer_(writer), num_hosts_(num_hosts), named_(num_hosts) {}

int TraceTracks::queues_pid() {
  const int pid = num_hosts_ + 1;
  if (!queues_named_) {
    queues_named_ = true;
    writer_.name_process(pid, "switch queues", num_hosts_);
  }
  return pid;
}

trace::Track TraceTracks::named(int host, int tid, const std::string& name) {
  std::vector<bool>& done = named_[host];
  if (done.empty()) writer_.name_process(host_pid(host), "host " + std::to_string(host), host);
  if (done.size() <= static_cast<std::size_t>(tid)) done.resize(tid + 1, false);
  const trace::Track track{host_pid(host), tid};
  if (!done[tid]) {
    done[tid] = true;
    writer_.name_thread(track, name, tid);
  }
  return track;
}

trace::Track TraceTracks::compute(int host) {
  return named(host, kComputeTid, "compute (ops, bubbles)");
}

trace::Track TraceTracks::grants(int host) { return named(host, kGrantsTid, "grants sent"); }

trace::Track TraceTracks::flow_lane(int host, int lane) {
  return named(host, kFirstLaneTid + lane, "flows in, lane " + std::to_string(lane));
}

}  // namespace safs::timeline
