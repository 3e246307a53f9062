// safs-chakra-gen PREFIX: writes PREFIX.0.et .. PREFIX.{stages-1}.et, a GPipe
// iteration as a Chakra execution trace (workload/chakra/gpipe_trace.h), for
// the [chakra] example and for trying the importer without a profiler.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "workload/chakra/chakra_file.h"
#include "workload/chakra/gpipe_trace.h"

int main(int argc, char** argv) {
  safs::GpipeTraceOptions o;
  std::string prefix;
  bool force = false;
  CLI::App app{"Writes a GPipe iteration as a Chakra execution trace, PREFIX.RANK.et"};
  app.add_option("prefix", prefix, "Output path prefix")->required();
  app.add_flag("--force", force, "Replace PREFIX.RANK.et files that exist");
  app.add_option("--stages", o.stages, "Pipeline stages, one rank each")
      ->check(CLI::Range(2, 4096));
  app.add_option("--microbatches", o.microbatches, "Microbatches")->check(CLI::Range(1, 100000));
  app.add_option("--forward-us", o.forward_us, "One forward op")->check(CLI::Range(0, 1000000000));
  app.add_option("--backward-us", o.backward_us, "One backward op")
      ->check(CLI::Range(0, 1000000000));
  app.add_option("--activation-bytes", o.activation_bytes, "Each send, either way")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 50));
  app.add_option("--allreduce-bytes", o.allreduce_bytes, "Closing all-reduce; 0: none")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 50));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  // Every file is checked before any is written: a user's file is never
  // replaced without --force, and a directory that is not there fails alike.
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(prefix).has_parent_path() ? fs::path(prefix).parent_path() : ".";
  std::error_code error;
  if (!fs::is_directory(folder, error) || access(folder.c_str(), W_OK) != 0) {
    std::cerr << "safs-chakra-gen: " << prefix << ": " << folder.string()
              << " is not a writable directory\n";
    return 2;
  }
  for (int r = 0; r < o.stages; ++r) {
    const std::string path = prefix + "." + std::to_string(r) + ".et";
    if (!force && fs::exists(fs::symlink_status(path, error))) {
      std::cerr << "safs-chakra-gen: " << path
                << " exists; choose another prefix, or add --force to replace it\n";
      return 2;
    }
  }
  try {
    const std::vector<safs::ChakraRank> ranks = safs::gpipe_trace(o);
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      safs::write_chakra_rank(ranks[r], prefix + "." + std::to_string(r) + ".et");
    }
  } catch (const std::runtime_error& e) {
    std::cerr << "safs-chakra-gen: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
