#!/usr/bin/env bash
# Installs the Debian 12 packages safs needs (idempotent) and configures a
# Release build in build/. Uses sudo when not root.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev   # tests and micro-benchmarks
  libtomlplusplus-dev                           # scenario files (TOML, with line numbers)
  libcli11-dev                                  # command-line parsing
  nlohmann-json3-dev                            # summary.json output
  openmpi-bin libopenmpi-dev                    # optional: sweeps split across MPI ranks
  python3-matplotlib                            # tools/plot: figures from run outputs
  libsodium-dev                                 # runtime: authenticated peers, sealed control frames
  libprotobuf-dev protobuf-compiler             # [chakra]: Chakra execution traces are protobuf
)
# Optional: ns-3 3.37 for the fidelity suite (validation/run.sh), with the
# libraries its .pc files name. Installed where the archive has them; the
# suite skips with a message where they are missing.
optional_packages=(
  libns3-dev libgsl-dev libsqlite3-dev libxml2-dev libpython3.11-dev
  tshark   # reads run --pcap captures back in a test (tools/safs-sim.lua)
)
# Optional: the Python module, `import safs` (python/, docs/python.md), built
# when pybind11 and Python's headers are found; pandas gives its DataFrames
# (lists of dicts without it); torch (1.13, CPU) is what safs.torch, the
# torch.distributed backend, plugs into, and OpenBLAS replaces the reference
# BLAS it would load otherwise (about 30x slower on a transformer layer).
# Apart from the ns-3 list, so that an archive without ns-3 still gets these.
python_packages=(pybind11-dev python3-dev python3-pandas python3-torch libopenblas0-pthread)

# Installs whichever of the given packages are not installed yet.
install_missing() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  local sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

install_missing "${packages[@]}"
install_missing "${optional_packages[@]}" ||
  echo "setup: optional packages (ns-3, tshark) unavailable; validation/run.sh and the pcap_tshark test will skip" >&2
install_missing "${python_packages[@]}" ||
  echo "setup: pybind11, python3-dev, pandas or torch unavailable; the Python module (its DataFrames, its torch backend) and their tests will skip" >&2

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_type=${SAFS_BUILD_TYPE:-Release}
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE="$build_type" >/dev/null
cmake --build "$root/build" -j "$(nproc)" >&2
