/* The functions of stand_ins/fake_cudart.cpp: the CUDA runtime's signatures with its C ABI types
 * (cudaError_t and cudaMemcpyKind as int, streams as pointers, cudaIpcMemHandle_t as 64 bytes).
 * Memory is host memory; a copy is memcpy. */
#ifndef COMMLENS_FAKE_CUDART_H
#define COMMLENS_FAKE_CUDART_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  char reserved[64];
} fake_ipc_handle;

/* A copy of an unknown kind fails as the real one does (cudaErrorInvalidMemcpyDirection, 21); a
 * second stand-in runtime (another "version") is built to fail with another code, so that a test
 * can tell which runtime ran a call. */
#ifndef FAKE_CUDART_INVALID_DIRECTION
#define FAKE_CUDART_INVALID_DIRECTION 21
#endif
enum {
  fake_cuda_success = 0,
  fake_cuda_error_invalid_value = 1,
  fake_cuda_error_invalid_direction = FAKE_CUDART_INVALID_DIRECTION
};
enum { fake_memcpy_host_to_host = 0, fake_memcpy_default = 4 };

int cudaMemcpy(void* dst, const void* src, size_t bytes, int kind);
int cudaMemcpyAsync(void* dst, const void* src, size_t bytes, int kind, void* stream);
int cudaMemcpyPeer(void* dst, int dst_device, const void* src, int src_device, size_t bytes);
int cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t bytes,
                        void* stream);
int cudaMalloc(void** memory, size_t bytes);
int cudaFree(void* memory);
int cudaIpcGetMemHandle(fake_ipc_handle* handle, void* address);
int cudaIpcOpenMemHandle(void** address, fake_ipc_handle handle, unsigned int flags);
int cudaIpcCloseMemHandle(void* address);
int cudaStreamBeginCapture(void* stream, int mode);
int cudaStreamEndCapture(void* stream, void** graph);
int cudaDeviceSynchronize(void);
int cudaStreamSynchronize(void* stream);
int cudaEventSynchronize(void* event);

/* How many calls of any of the functions above reached this library. */
int fake_cudart_calls(void);

#ifdef __cplusplus
}
#endif
#endif
