// The processes a sweep is split across: this one alone, or the ranks of an
// MPI job (`mpirun -np N safs-sim sweep ...`) when safs-sim was built with
// MPI (SAFS_WITH_MPI) and started by mpirun.
#pragma once

#include <string>
#include <vector>

namespace safs::sweep {

struct RankInfo {
  int rank = 0;
  int size = 1;
  int on_this_host = 1;  // ranks sharing this machine's cores
};

// Joins the MPI job if there is one (MPI_Init). Throws BadInput when started
// by mpirun with several ranks but built without MPI: every rank would run
// every point.
RankInfo join_ranks();

// Rank 0 gets every rank's `text`, in rank order; the others get nothing.
std::vector<std::string> gather_at_rank0(const std::string& text);

// Leaves the MPI job (MPI_Finalize), if joined.
void leave_ranks();

}  // namespace safs::sweep
