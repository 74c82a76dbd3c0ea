// Finding NCCL's own functions without linking NCCL (nccl_api.hpp).
#include "nccl_api.hpp"

#include <cstdio>
#include <dlfcn.h>

namespace commlens::nccl {

void* find_nccl_function(const char* name) noexcept {
  if (void* next = dlsym(RTLD_NEXT, name)) {
    return next;
  }
  // RTLD_NOLOAD: only a libnccl.so.2 the program already loaded; the handle is never closed, so the
  // library stays as long as the process (it would anyway while its functions are called).
  void* loaded = dlopen("libnccl.so.2", RTLD_NOLOAD | RTLD_LAZY);
  return loaded != nullptr ? dlsym(loaded, name) : nullptr;
}

ncclResult_t report_missing(const char* name) noexcept {
  std::fprintf(stderr, "commlens: %s was called but no NCCL library (libnccl.so.2) is loaded\n", name);
  return kNcclSystemError;
}

} // namespace commlens::nccl
