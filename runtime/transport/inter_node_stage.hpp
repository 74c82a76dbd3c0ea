#pragma once
// The step between nodes of the hierarchical allreduce: the node leaders allreduce their node's
// partial result through MPI on pinned host memory, in chunks, pipelined so that the copy of the
// next chunk off the GPU and the copy of the previous chunk back run while MPI reduces the
// current one (Temuçin's "High-Performance Interconnect-Aware MPI communication for Deep Learning Workloads",
// ch. 5: 3-stage hierarchical pipelined allreduce; the MPI here is not CUDA-aware, so host staging is the one
// path between nodes). The node stages on either side run in the same chunks: a chunk is reduced into the
// leader just before it is copied off, and the other ranks of the node copy each chunk out once it is back,
// while later chunks are still between nodes.
#include "mpi_header.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>

namespace commlens::runtime {

// What the step between nodes reports.
struct BetweenNodes {
  int rc = MPI_SUCCESS; // of the MPI calls between the node leaders
  int cuda_error = 0;
  std::uint64_t bytes_host = 0;
  std::uint32_t chunks = 0;
};

// The node stages the step between nodes runs chunk by chunk.
struct NodeStages {
  // Queues on `stream` the node's reduction of elements [first, first + count) into the data.
  std::function<int(std::size_t first, std::size_t count, void* stream)> reduce_into_leader;
  // Elements [0, ready) of the data hold the final result: the node may copy them out.
  std::function<void(std::size_t ready)> announce;
};

class InterNodeStage {
public:
  InterNodeStage() = default;
  InterNodeStage(const InterNodeStage&) = delete;
  InterNodeStage& operator=(const InterNodeStage&) = delete;
  ~InterNodeStage();

  // Collective over `leaders` (one rank per node). `data` is `count` elements of `datatype` on the
  // current GPU, which node.reduce_into_leader fills chunk by chunk; on return it holds the
  // allreduce over every node's data. The last announcement (of every element) is the caller's,
  // so that it can publish an error first.
  BetweenNodes allreduce(void* data, int count, MPI_Datatype datatype, MPI_Op op, std::size_t element_bytes,
                         MPI_Comm leaders, const NodeStages& node);

private:
  static constexpr int kSlots = 2;
  bool ready();

  void* copy_out_ = nullptr; // cudaStream_t: device -> host
  void* copy_in_ = nullptr;  // cudaStream_t: host -> device
  void* staged_[kSlots] = {};
  void* landed_[kSlots] = {};
  unsigned char* host_ = nullptr; // kSlots chunks of pinned memory
};

} // namespace commlens::runtime
