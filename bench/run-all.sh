#!/usr/bin/env bash
# Runs every benchmark against a build directory and prints their figures.
set -euo pipefail
build=${1:-build}
here=$(dirname "$0")
echo "== per-call overhead (bench/overhead.sh)"
bash "$here/overhead.sh" "$build"
echo "== writer throughput (writer_throughput)"
"$build/bench/writer_throughput" 2000000 4 || true
