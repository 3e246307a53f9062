// `safs-sim run FILE`: one scenario, its outputs written to a directory. On
// a terminal a progress bar (run_progress.h) shows on stderr while it runs;
// otherwise only a final line is printed (nothing with --quiet).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "console/verbosity.h"
#include "timeline/trace_options.h"

namespace safs::cli {

struct RunOptions {
  std::string file;
  std::string transport;
  std::int64_t seed = -1;
  std::vector<std::string> overrides;
  std::string out_dir;                    // empty: default_output_dir (see run_outputs.h)
  bool out_given = false;                 // --out "" is an error, not the default
  bool force = false;                     // replace an earlier run's files in out_dir
  std::vector<std::string> command_line;  // for summary.json's provenance
  double memory_limit_gb = 0;             // 0: default_memory_limit_bytes (memory_estimate.h)
  double queue_sample_us = 0;             // > 0: also write queues.csv
  timeline::TraceOptions trace;           // a path: also write a timeline trace there
  std::vector<std::string> pcap;          // --pcap PORTS FILE: a packet capture of those ports
  console::Verbosity verbosity = console::Verbosity::kNormal;
};

// The --transport and --seed shorthands as --set overrides, after the others.
std::vector<std::string> all_overrides(const std::vector<std::string>& overrides,
                                       const std::string& transport, std::int64_t seed);

int run(const RunOptions& options);

}  // namespace safs::cli
