// The CUDA runtime's copy, IPC, allocation, capture and synchronisation functions over host memory
// (fake_cudart.h); the waits return at once, as all work is done when its call returns.
// A copy of an unknown kind fails with fake_cuda_error_invalid_direction; an IPC handle carries the
// exported address, so opening it maps the same memory.
#include "fake_cudart.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace {

std::atomic<int> calls{0};

int copy(void* dst, const void* src, size_t bytes, int kind) {
  ++calls;
  if (kind < fake_memcpy_host_to_host || kind > fake_memcpy_default) {
    return fake_cuda_error_invalid_direction;
  }
  std::memcpy(dst, src, bytes);
  return fake_cuda_success;
}

} // namespace

extern "C" {

int cudaMemcpy(void* dst, const void* src, size_t bytes, int kind) {
  return copy(dst, src, bytes, kind);
}

int cudaMemcpyAsync(void* dst, const void* src, size_t bytes, int kind, void*) {
  return copy(dst, src, bytes, kind);
}

int cudaMemcpyPeer(void* dst, int, const void* src, int, size_t bytes) {
  return copy(dst, src, bytes, fake_memcpy_default);
}

int cudaMemcpyPeerAsync(void* dst, int, const void* src, int, size_t bytes, void*) {
  return copy(dst, src, bytes, fake_memcpy_default);
}

int cudaMalloc(void** memory, size_t bytes) {
  ++calls;
  *memory = std::malloc(bytes);
  return *memory != nullptr ? fake_cuda_success : fake_cuda_error_invalid_value;
}

int cudaFree(void* memory) {
  ++calls;
  std::free(memory);
  return fake_cuda_success;
}

int cudaIpcGetMemHandle(fake_ipc_handle* handle, void* address) {
  ++calls;
  std::memset(handle, 0, sizeof *handle);
  std::memcpy(handle->reserved, &address, sizeof address);
  return fake_cuda_success;
}

int cudaIpcOpenMemHandle(void** address, fake_ipc_handle handle, unsigned int) {
  ++calls;
  std::memcpy(address, handle.reserved, sizeof *address);
  return *address != nullptr ? fake_cuda_success : fake_cuda_error_invalid_value;
}

int cudaIpcCloseMemHandle(void* address) {
  ++calls;
  return address != nullptr ? fake_cuda_success : fake_cuda_error_invalid_value;
}

int cudaStreamBeginCapture(void* stream, int) {
  ++calls;
  return stream != nullptr ? fake_cuda_success : fake_cuda_error_invalid_value; // not the legacy stream
}

int cudaStreamEndCapture(void* stream, void** graph) {
  ++calls;
  *graph = stream; // a graph named after its stream
  return fake_cuda_success;
}

int cudaDeviceSynchronize(void) {
  ++calls;
  return fake_cuda_success;
}

int cudaStreamSynchronize(void*) {
  ++calls;
  return fake_cuda_success;
}

// An event is any non-null pointer here; a null one is invalid, as in the real runtime.
int cudaEventSynchronize(void* event) {
  ++calls;
  return event != nullptr ? fake_cuda_success : fake_cuda_error_invalid_value;
}

int fake_cudart_calls(void) {
  return calls.load();
}

} // extern "C"
