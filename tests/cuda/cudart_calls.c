/* cudart_calls: a program that calls a shared libcudart (stand_ins' fake one) between MPI calls,
 * as PyTorch does the real one. libcommlens.so defines the runtime's copy, IPC, allocation and
 * capture functions (collectors/cudart_calls), so under LD_PRELOAD each call goes through them
 * first. The calls and their checks are in cudart_calls_library.c: linked (cudart_calls), or
 * opened with dlopen and RTLD_LOCAL (cudart_calls_dlopen, given the library's path), as Python
 * opens its extensions. Each rank makes 13 runtime calls and 1 MPI_Allreduce; exit 0 when every
 * rank saw all correct. */
#include <mpi.h>
#include <stdio.h>

#ifdef CUDART_CALLS_DLOPEN
#include <dlfcn.h>
#else
int cudart_calls_checks(int rank);
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#ifdef CUDART_CALLS_DLOPEN
  int (*cudart_calls_checks)(int) = NULL;
  void* library = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
  if (library != NULL) {
    *(void**)(&cudart_calls_checks) = dlsym(library, "cudart_calls_checks");
  }
  if (cudart_calls_checks == NULL) {
    fprintf(stderr, "cudart_calls: cannot open the library of checks: %s\n", dlerror());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
#endif
  const int failures = cudart_calls_checks(rank);
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("cudart_calls: %d failures on all ranks\n", all_failures);
  }
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
