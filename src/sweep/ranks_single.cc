// Built without MPI: always a single rank.
#include "console/bad_input.h"
#include "sweep/ranks.h"
#include "sweep/ranks_env.h"

namespace safs::sweep {

RankInfo join_ranks() {
  const int launched = env_int("OMPI_COMM_WORLD_SIZE", env_int("PMI_SIZE", 1));
  if (launched > 1) {
    throw console::BadInput("started as one of " + std::to_string(launched) +
                            " MPI ranks, but this safs-sim was built without MPI "
                            "(install libopenmpi-dev and rebuild)");
  }
  return {};
}

std::vector<std::string> gather_at_rank0(const std::string& text) { return {text}; }

void leave_ranks() {}

}  // namespace safs::sweep
