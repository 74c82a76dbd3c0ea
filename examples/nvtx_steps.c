/* Training steps marked by NVTX ranges, as a PyTorch script marks them with
 * torch.cuda.nvtx.range_push("step"), in a plain MPI program: NVTX is header only and calls the
 * tool NVTX_INJECTION64_PATH names, so no GPU is needed.
 *
 *   nvtx_steps STEPS
 *
 * Every rank makes STEPS steps. A step is a range of NVTX's default domain named "step N" (pushed
 * with nvtxRangePushA in even steps, nvtxRangePushEx in odd ones) holding a "forward" and a
 * "backward" range, each with one 4-byte MPI_Allreduce; inside "backward" a second "step" range,
 * as a framework's range inside the program's, which is not a step of its own. Between steps, and
 * before the first, one MPI_Barrier outside any step, and a range named "step" of another NVTX
 * domain, which does not mark a step either. So the profiler sees STEPS steps per rank, each with
 * 2 MPI_Allreduce calls and no MPI_Barrier, and STEPS + 1 MPI_Barrier calls outside them. */
#include <mpi.h>
#include <nvtx3/nvToolsExt.h>

#include <stdio.h>
#include <stdlib.h>

static void allreduce_once(void) {
  int value = 1, sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

static void push_step(int step) {
  char name[32];
  snprintf(name, sizeof name, "step %d", step);
  if (step % 2 == 0) {
    nvtxRangePushA(name);
    return;
  }
  nvtxEventAttributes_t attributes = {0};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = name;
  nvtxRangePushEx(&attributes);
}

static void between_steps(nvtxDomainHandle_t other_domain) {
  nvtxEventAttributes_t attributes = {0};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = "step";
  nvtxDomainRangePushEx(other_domain, &attributes);
  MPI_Barrier(MPI_COMM_WORLD);
  nvtxDomainRangePop(other_domain);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int steps = argc > 1 ? atoi(argv[1]) : 5;
  nvtxDomainHandle_t other_domain = nvtxDomainCreateA("data loader");
  for (int step = 0; step < steps; ++step) {
    between_steps(other_domain);
    push_step(step);
    nvtxRangePushA("forward");
    allreduce_once();
    nvtxRangePop();
    nvtxRangePushA("backward");
    nvtxRangePushA("step");
    allreduce_once();
    nvtxRangePop();
    nvtxRangePop();
    nvtxRangePop();
  }
  between_steps(other_domain);
  nvtxDomainDestroy(other_domain);
  MPI_Finalize();
  return 0;
}
