// `safs-sim sweep FILE`: runs every point of a grid (from the file's [sweep]
// table and --grid) in parallel worker processes, skips points finished by an
// earlier sweep, and writes OUT/<point>/ for each point plus OUT/sweep.csv.
// Under mpirun, rank r runs the points i with i % ranks == r and rank 0
// writes the CSV. With --shard I/N (one task of a scheduler's array job) it
// runs only the points i with i % N == I and writes no CSV; --collect then
// runs nothing and writes the CSV of every point, as one sweep would.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "console/verbosity.h"

namespace safs::sweep {

struct SweepOptions {
  std::string file;
  std::vector<std::string> grid;       // --grid key=v1,v2 (over the file's axes)
  std::vector<std::string> overrides;  // --set, --transport, --seed: every point
  std::vector<std::string> metrics;    // --metric (replaces sweep.metrics)
  std::string out_dir;                 // default out/sweep-STEM
  int jobs = 0;                        // parallel points per rank; 0 = its share of the cores
  std::string shard;                   // --shard I/N: only points i % N == I; empty = all
  bool collect = false;                // --collect: run nothing, write sweep.csv of every point
  std::string executable;              // the safs-sim each point runs; empty = this one
  console::Verbosity verbosity = console::Verbosity::kNormal;
};

// Returns 0, 1 if a point failed, or 128 + the signal that stopped it.
int run_sweep(const SweepOptions& options);

// The [sweep] grid of `file` checked as `sweep` checks it before running:
// every point must load (overrides applied). Returns the number of points.
std::size_t check_sweep_points(const std::string& file, const std::vector<std::string>& overrides);

}  // namespace safs::sweep
