/* What a push and pop of NVTX's default domain costs a training loop when libcommlens.so is NVTX's
 * tool (collectors/nvtx_tool: the collector set without CUPTI), against no tool (NVTX's own no-op
 * functions). Each step is a "step" range holding PAIRS ranges named "layer"; prints the
 * nanoseconds per pair, over every pair of STEPS steps. Run by nvtx_tool_cost.sh; no GPU needed.
 *
 *   nvtx_tool_cost STEPS PAIRS */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <nvtx3/nvToolsExt.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int steps = argc > 1 ? atoi(argv[1]) : 200;
  const int pairs = argc > 2 ? atoi(argv[2]) : 1000;
  nvtxRangePushA("warm-up"); /* the module's first NVTX call loads the tool */
  nvtxRangePop();
  const double start = now_ns();
  for (int step = 0; step < steps; ++step) {
    nvtxRangePushA("step");
    for (int pair = 0; pair < pairs; ++pair) {
      nvtxRangePushA("layer");
      nvtxRangePop();
    }
    nvtxRangePop();
  }
  const double elapsed = now_ns() - start;
  printf("ns_per_pair %.2f\n", elapsed / ((double)steps * (pairs + 1)));
  MPI_Finalize();
  return 0;
}
