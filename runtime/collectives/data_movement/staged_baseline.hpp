#pragma once
// The baseline of the data-movement collectives on device buffers: what Open MPI's coll/accelerator
// does (and host_staging.hpp does for allreduce): copy the device buffers' spans to pinned host
// memory, run PMPI on the host copies, copy the outputs back. PMPI on the user's buffers when the
// MPI library is CUDA-aware or a buffer is in host memory.
#include "mpi_header.hpp"

#include <cstddef>
#include <cstdint>

namespace commlens::runtime {

class StagedBuffers {
public:
  explicit StagedBuffers(bool cuda_aware) noexcept : cuda_aware_(cuda_aware) {}
  StagedBuffers(const StagedBuffers&) = delete;
  StagedBuffers& operator=(const StagedBuffers&) = delete;

  // What to hand PMPI for the send side's `blocks` consecutive (count, datatype) messages at
  // `buffer` (MPI_IN_PLACE and host buffers as they are): their pinned host copy for device memory.
  const void* send(const void* buffer, int count, MPI_Datatype datatype, int blocks = 1) noexcept;
  // The receive side's: a pinned host image of the span, filled from the device first when the
  // call reads it (`holds_input`: in place) or the datatype leaves gaps MPI must not clobber;
  // finish() copies it back.
  void* receive(void* buffer, int count, MPI_Datatype datatype, int blocks, bool holds_input) noexcept;

  // The call's return code, after copying the receive side back (MPI_ERR_NO_MEM or MPI_ERR_OTHER
  // when staging failed: then the call must not run, see ok()).
  int finish(int rc) noexcept;
  bool ok() const noexcept { return !failed_; }
  bool staged() const noexcept { return bytes_host_ > 0; }
  std::uint64_t bytes_host() const noexcept { return bytes_host_; }

private:
  void* stage(const void* buffer, int count, MPI_Datatype datatype, int blocks, bool send_side,
              bool copy_in) noexcept;

  bool cuda_aware_;
  bool failed_ = false;
  std::uint64_t bytes_host_ = 0;
  void* device_output_ = nullptr; // the receive span's start on the device
  const void* host_output_ = nullptr;
  std::size_t output_span_ = 0;
};

} // namespace commlens::runtime
