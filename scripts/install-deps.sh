#!/usr/bin/env bash
# Installs everything commlens needs to build, test and run its examples on Debian 12.
# Idempotent: packages already present are skipped, so `make` targets can call it every time.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config python3
  openmpi-bin libopenmpi-dev python3-mpi4py
  # PyTorch (CPU) for the data-parallel trainer in examples/dl and its test
  python3-torch python3-torchvision
  # MPICH beside Open MPI for the MPI_T degradation test (tests/mpich); its alternatives rank below
  # Open MPI's, so mpicc, mpirun and the mpi.h of the default build stay Open MPI's.
  mpich libmpich-dev
  libsqlite3-dev sqlite3
  nlohmann-json3-dev libgtest-dev libgmock-dev libcli11-dev libfmt-dev
  qt6-base-dev fonts-dejavu-core xvfb xauth
  # the notebook module (python/commlens) returns pandas DataFrames; its test runs /usr/bin/python3
  python3-pandas
  # the HTML report's test renders it in a headless browser and reads the page's layout
  chromium
  clang libclang-rt-14-dev
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
echo "commlens: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
