#include "device_buffer.hpp"

#include <cuda.h>

namespace commlens::runtime {

BufferQuery query_buffer(const void* pointer) noexcept {
  unsigned int memory_type = 0;
  int is_managed = 0;
  int ordinal = -1;
  CUdeviceptr start = 0;
  unsigned long long buffer_id = 0;
  CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                      CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                      CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_BUFFER_ID};
  void* values[] = {&memory_type, &is_managed, &ordinal, &start, &buffer_id};
  const CUresult result =
      cuPointerGetAttributes(5, attributes, values, reinterpret_cast<CUdeviceptr>(pointer));
  BufferQuery query;
  if (result != CUDA_SUCCESS || memory_type != CU_MEMORYTYPE_DEVICE) {
    return query; // unregistered host memory, pinned host memory, or no context at all
  }
  if (is_managed != 0) {
    query.kind = BufferKind::Managed;
    return query;
  }
  query.kind = BufferKind::Device;
  query.device = {ordinal, reinterpret_cast<void*>(start), buffer_id};
  return query;
}

} // namespace commlens::runtime
