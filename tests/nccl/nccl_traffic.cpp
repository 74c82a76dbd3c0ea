// nccl_traffic: the NCCL calls of nccl_traffic_calls.cpp between MPI_Init and MPI_Finalize. Built
// twice: linked with that library (and so with NCCL), and as nccl_traffic_dlopen
// (NCCL_TRAFFIC_DLOPEN), which loads the library named by its argument with dlopen(RTLD_LOCAL), as
// a Python extension loads a framework library that depends on NCCL: NCCL is then not global.
#include <cstdio>
#include <dlfcn.h>
#include <mpi.h>

extern "C" void run_nccl_traffic();

namespace {
void run_loaded(const char* library_path) {
  void* library = library_path != nullptr ? dlopen(library_path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  auto* run = library != nullptr ? reinterpret_cast<void (*)()>(dlsym(library, "run_nccl_traffic")) : nullptr;
  if (run == nullptr) {
    std::fprintf(stderr, "nccl_traffic: cannot load run_nccl_traffic: %s\n",
                 library ? dlerror() : "no library");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  run();
}
} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
#ifdef NCCL_TRAFFIC_DLOPEN
  run_loaded(argc > 1 ? argv[1] : nullptr);
#else
  (void)run_loaded;
  run_nccl_traffic();
#endif
  MPI_Finalize();
  return 0;
}
