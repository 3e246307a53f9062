// Built with MPI: joins the job when mpirun started this process; run
// directly, it stays a single rank without initialising MPI.
#include <mpi.h>

#include "sweep/ranks.h"
#include "sweep/ranks_env.h"

namespace safs::sweep {

namespace {
bool joined = false;
}

RankInfo join_ranks() {
  if (!started_by_mpirun()) return {};
  MPI_Init(nullptr, nullptr);
  joined = true;
  RankInfo info;
  MPI_Comm_rank(MPI_COMM_WORLD, &info.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &info.size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  MPI_Comm_size(local, &info.on_this_host);
  MPI_Comm_free(&local);
  return info;
}

std::vector<std::string> gather_at_rank0(const std::string& text) {
  if (!joined) return {text};
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<std::size_t>(size), 0);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(rank == 0 ? static_cast<std::size_t>(total) : 0, '\0');
  MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, MPI_COMM_WORLD);
  if (rank != 0) return {};
  std::vector<std::string> texts;
  for (int r = 0; r < size; ++r) texts.push_back(all.substr(offsets[r], lengths[r]));
  return texts;
}

void leave_ranks() {
  if (joined) MPI_Finalize();
  joined = false;
}

}  // namespace safs::sweep
