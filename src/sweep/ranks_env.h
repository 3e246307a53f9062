// What the MPI launcher tells a process through its environment.
#pragma once

namespace safs::sweep {

// The integer in environment variable `name`, or `fallback`.
int env_int(const char* name, int fallback);

// OpenMPI's mpirun (or another PMI launcher) started this process.
bool started_by_mpirun();

}  // namespace safs::sweep
