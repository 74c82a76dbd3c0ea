/* cudart_calls: a program that calls a shared libcudart (stand_ins' fake one, host memory) between
 * MPI calls, as PyTorch does the real one. libcommlens.so defines the runtime's copy, IPC and
 * allocation functions (collectors/cudart_calls), so under LD_PRELOAD each call below goes through
 * them first. The program checks what a user would notice if they got in the way: every copy's
 * bytes arrive, every result (an error too) is the runtime's, every call reaches the runtime once.
 * Each rank makes 13 runtime calls and 1 MPI_Allreduce; exit 0 when every rank saw all correct. */
#include "fake_cudart.h"

#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

static void expect(int condition, const char* what) {
  if (!condition) {
    fprintf(stderr, "cudart_calls: %s\n", what);
    ++failures;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
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
  expect(fake_cudart_calls() == 13, "not every runtime call reached the runtime exactly once");
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("cudart_calls: %d failures on all ranks\n", all_failures);
  }
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
