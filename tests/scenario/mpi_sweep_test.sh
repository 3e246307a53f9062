#!/usr/bin/env bash
# A sweep split across two MPI ranks runs every point once and gives the same
# combined CSV as one process. Usage: mpi_sweep_test.sh SAFS_SIM MPIEXEC SOURCE_DIR
set -euo pipefail
sim=$1 mpiexec=$2 source_dir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# mpirun refuses root unless told, and a 2-core CI machine may have fewer slots.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
grid=(--grid "transport.name=dctcp,reno,safs" --grid "topology.link_delay_us=1,2")
scenario=$source_dir/scenarios/examples/incast.toml

"$sim" sweep "$scenario" "${grid[@]}" --quiet -j 2 --out "$work/single"
"$mpiexec" -np 2 --oversubscribe "$sim" sweep "$scenario" "${grid[@]}" -j 1 \
  --out "$work/ranks" >"$work/ranks.log" 2>&1 || { cat "$work/ranks.log"; exit 1; }

grep -q "6 points (6 run, 0 done before, 0 failed) on 2 ranks" "$work/ranks.log" ||
  { echo "unexpected output:"; cat "$work/ranks.log"; exit 1; }
cmp "$work/single/sweep.csv" "$work/ranks/sweep.csv"
echo "1 passed, 0 failed"
