/* The runtime calls of cudart_calls (tests/cuda/cudart_calls.c), in a library of their own that
 * links the shared libcudart (stand_ins' fake one, host memory), so that a program can also open
 * it with dlopen: a library opened so (RTLD_LOCAL, as Python opens its extensions) has its libcudart
 * outside the global scope, where libcommlens.so's functions must still find it. Each call checks
 * what a user would notice if libcommlens.so got in the way: every copy's bytes arrive, every result
 * (an error too) is the runtime's, every call reaches the runtime once. 17 runtime calls. */
#include "fake_cudart.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

static void expect(int condition, const char* what) {
  if (!condition) {
    fprintf(stderr, "cudart_calls: %s\n", what);
    ++failures;
  }
}

/* The number of checks that failed. */
int cudart_calls_checks(int rank) {
  enum { bytes = 4096 };
  char source[bytes];
  for (int i = 0; i < bytes; ++i) {
    source[i] = (char)(i * 7 + rank);
  }
  void* device = NULL;
  expect(cudaMalloc(&device, bytes) == fake_cuda_success && device != NULL, "cudaMalloc failed");
  expect(cudaMemcpy(device, source, bytes, fake_memcpy_default) == fake_cuda_success, "cudaMemcpy failed");
  char back[bytes];
  memset(back, 0, sizeof back);
  expect(cudaMemcpyAsync(back, device, bytes, fake_memcpy_default, NULL) == fake_cuda_success,
         "cudaMemcpyAsync failed");
  expect(memcmp(back, source, bytes) == 0, "cudaMemcpy then cudaMemcpyAsync did not bring the bytes back");
  char peer[bytes];
  expect(cudaMemcpyPeer(peer, 0, device, 0, bytes) == fake_cuda_success &&
             cudaMemcpyPeerAsync(peer + 1, 0, peer, 0, bytes - 1, NULL) == fake_cuda_success,
         "cudaMemcpyPeer or cudaMemcpyPeerAsync failed");
  expect(memcmp(peer + 1, source, bytes - 1) == 0, "the peer copies moved the wrong bytes");
  expect(cudaMemcpy(back, source, bytes, 99) == fake_cuda_error_invalid_direction,
         "a copy of an invalid kind did not return the runtime's error");
  fake_ipc_handle handle;
  void* opened = NULL;
  expect(cudaIpcGetMemHandle(&handle, device) == fake_cuda_success &&
             cudaIpcOpenMemHandle(&opened, handle, 1) == fake_cuda_success && opened == device,
         "the IPC handle did not open the exported memory");
  expect(cudaIpcCloseMemHandle(opened) == fake_cuda_success, "cudaIpcCloseMemHandle failed");
  expect(cudaFree(device) == fake_cuda_success, "cudaFree failed");
  void* graph = NULL;
  void* stream = &graph;
  expect(cudaStreamBeginCapture(NULL, 0) == fake_cuda_error_invalid_value &&
             cudaStreamBeginCapture(stream, 0) == fake_cuda_success &&
             cudaStreamEndCapture(stream, &graph) == fake_cuda_success && graph == stream,
         "the stream capture calls did not return the runtime's results");
  expect(cudaDeviceSynchronize() == fake_cuda_success && cudaStreamSynchronize(stream) == fake_cuda_success &&
             cudaEventSynchronize(stream) == fake_cuda_success &&
             cudaEventSynchronize(NULL) == fake_cuda_error_invalid_value,
         "the synchronisation calls did not return the runtime's results");
  expect(fake_cudart_calls() == 17, "not every runtime call reached the runtime exactly once");
  return failures;
}
