/* cudart_calls: a program that calls a shared libcudart (stand_ins' fake one) between MPI calls,
 * as PyTorch does the real one. libcommlens.so defines the runtime's copy, IPC, allocation,
 * capture and synchronisation functions (collectors/cudart_calls), so under LD_PRELOAD each call
 * goes through them first. The calls and their checks are in cudart_calls_library.c: linked (cudart_calls),
 * opened with dlopen and RTLD_LOCAL (cudart_calls_dlopen, given the library's path), as Python opens its
 * extensions, or both, each library over its own runtime version (cudart_calls_two_runtimes, given
 * the path of the library built over libcudart.so.12). Each library makes 17 runtime calls, each
 * rank 1 MPI_Allreduce; exit 0 when every rank saw all correct. */
#include <mpi.h>
#include <stdio.h>

/* Linked: the checks' library is in the global scope. Opened (argv[1]): with RTLD_LOCAL. */
#if defined(CUDART_CALLS_DLOPEN) || defined(CUDART_CALLS_TWO_RUNTIMES)
#define CUDART_CALLS_OPENED 1
#include <dlfcn.h>
#endif
#ifndef CUDART_CALLS_DLOPEN
#define CUDART_CALLS_LINKED 1
int cudart_calls_checks(int rank);
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int failures = 0;
#ifdef CUDART_CALLS_LINKED
  failures += cudart_calls_checks(rank);
#endif
#ifdef CUDART_CALLS_OPENED
  int (*opened_checks)(int) = NULL;
  void* library = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
  if (library != NULL) {
    *(void**)(&opened_checks) = dlsym(library, "cudart_calls_checks");
  }
  if (opened_checks == NULL) {
    fprintf(stderr, "cudart_calls: cannot open the library of checks: %s\n", dlerror());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  failures += opened_checks(rank);
#endif
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("cudart_calls: %d failures on all ranks\n", all_failures);
  }
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
