# NCCL for the GPU examples and benchmarks: nccl.h (the CUDA toolkit's or /usr/include) and
# libnccl: the system's, or the one a pip-installed PyTorch brings (nvidia-nccl-cu*: a
# libnccl.so.2 without the unversioned link) found through the Python that has torch.
# Sets COMMLENS_NCCL_INCLUDE_DIR and COMMLENS_NCCL_LIBRARY (NOTFOUND when absent).
include_guard(GLOBAL)
find_path(COMMLENS_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
set(commlens_nccl_hints ${CUDAToolkit_LIBRARY_DIR})
if(COMMLENS_NCCL_INCLUDE_DIR)
  foreach(python ${Python3_EXECUTABLE} python3 /usr/bin/python3)
    execute_process(
      COMMAND ${python} -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))"
      OUTPUT_VARIABLE commlens_pip_nccl OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(commlens_pip_nccl)
      list(APPEND commlens_nccl_hints ${commlens_pip_nccl})
      break()
    endif()
  endforeach()
endif()
find_library(COMMLENS_NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${commlens_nccl_hints})
