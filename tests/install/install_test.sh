#!/usr/bin/env bash
# The installed package is usable on its own: `cmake --install` into a fresh prefix, then the
# installed `commlens run` profiles an MPI job with the installed library, pkg-config names the
# library to preload, and find_package(commlens) gives a consumer the library path.
#   install_test.sh BUILD_DIR EXAMPLE_PROGRAM
set -euo pipefail
build=$1
example=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" > /dev/null

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$prefix/bin/commlens" run --output "$work/out" -- mpirun -np 4 --oversubscribe "$example" 3 > /dev/null 2>&1
calls=$(sqlite3 "$work/out/commlens.sqlite" \
  "SELECT sum(count) FROM call_stats s JOIN functions f ON f.id = s.function_id WHERE f.name = 'MPI_Sendrecv'")
[[ "$calls" -gt 0 ]] || { echo "FAIL: no MPI_Sendrecv calls recorded through the installed commlens"; exit 1; }

preload=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --variable=preload commlens)
[[ "$(realpath "$preload")" == "$(realpath "$prefix/lib/libcommlens.so")" ]] ||
  { echo "FAIL: pkg-config preload is $preload, not under $prefix"; exit 1; }

mkdir "$work/consumer"
cat > "$work/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(consumer NONE)
find_package(commlens REQUIRED)
get_target_property(location commlens::commlens IMPORTED_LOCATION)
message(STATUS "commlens library: ${location}")
CMAKE
output=$(cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" 2>&1)
grep -q "commlens library: $prefix/lib/libcommlens.so" <<<"$output" ||
  { echo "FAIL: find_package(commlens) did not give the installed library"; echo "$output"; exit 1; }
echo "installed package: commlens run recorded $calls MPI_Sendrecv calls; pkg-config and find_package point into the prefix"
