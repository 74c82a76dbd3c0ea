# The steps the GPU check scripts share (sourced; builds nothing). Each sets status=1 on a failure.
# gpu_check_ctest BUILD NAME REGEX: the ctest tests matching REGEX, verbose, into BUILD/NAME-ctest.log;
#   prints the gtest verdicts and ctest's summary.
# gpu_check_fuzz BUILD NAME SETS: scripts/runtime-fuzz.sh over the collective SETS for FUZZ_SECONDS
#   (300; 0 skips it; FUZZ_COLLECTIVES overrides SETS), into BUILD/NAME-fuzz.log; prints its end.
gpu_check_ctest() {
  local build=$1 name=$2 regex=$3
  (cd "$build" && ctest -R "$regex" --output-on-failure -V) >"$build/$name-ctest.log" 2>&1 || status=1
  grep -E "\[ +(OK|FAILED|SKIPPED) +\]|Failure|Expected|Which is|mismatch|tests passed|tests failed" \
    "$build/$name-ctest.log"
  echo "full log: $build/$name-ctest.log"
}

gpu_check_fuzz() {
  local build=$1 name=$2 sets=$3
  ((${FUZZ_SECONDS:-300} > 0)) || return 0
  FUZZ_COLLECTIVES=${FUZZ_COLLECTIVES:-$sets} \
    bash "$(dirname "${BASH_SOURCE[0]}")/runtime-fuzz.sh" "$build" "${FUZZ_SECONDS:-300}" >"$build/$name-fuzz.log" 2>&1 ||
    status=1
  grep -vE "^runtime_fuzz: seed" "$build/$name-fuzz.log" | tail -30
  echo "full fuzz log: $build/$name-fuzz.log"
}
