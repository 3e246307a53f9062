// Where `safs-sim run` writes, checked before the run starts so that a result
// is never lost or mixed with another: an output directory holds one run's
// files only, and a trace path that cannot be written fails in a second, not
// after the whole run.
#pragma once

#include <string>

namespace safs::cli {

// Every file name a run writes into its output directory (and its temporary
// file, NAME.tmp); --force removes these and nothing else.
bool is_run_output(const std::string& file_name);

// Creates `dir`. An existing one must be empty (BadInput otherwise) unless
// `force`, which removes an earlier run's outputs from it and nothing else.
void prepare_output_dir(const std::string& dir, bool force);

// out/STEM-TRANSPORT-FINGERPRINT: distinct overrides, distinct directories.
std::string default_output_dir(const std::string& scenario_path, const std::string& transport,
                               const std::string& fingerprint);

// Creates the directory `path` is in; throws BadInput if `path` is a
// directory, cannot be written, is the scenario file, or exists without
// `force` (--force).
void check_trace_path(const std::string& path, const std::string& scenario_file, bool force);
// The same for `option` (e.g. "--pcap"), which also refuses an existing file.
void check_new_output_file(const std::string& option, const std::string& path);

}  // namespace safs::cli
