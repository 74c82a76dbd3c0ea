#pragma once
// A POSIX shared-memory segment shared by the ranks of one node communicator: one cache-line
// aligned slot per rank holding what that rank publishes for the current call (its buffers' IPC
// handles, whether it can take the runtime path) and an arrival counter. Arrival counters make the
// barriers between the phases of a collective: spinning on shared memory costs well under a
// microsecond, where a PMPI barrier costs several.
#include "mpi_header.hpp"
#include "node_shared_memory.hpp"

#include <atomic>
#include <cstdint>
#include <string>

namespace commlens::runtime {

inline constexpr int kHandleBytes = 64; // sizeof(cudaIpcMemHandle_t)

// One device buffer as its owner publishes it: enough for a peer to map it (or find its mapping in
// the cache) and locate the buffer inside the allocation.
struct PublishedBuffer {
  unsigned char handle[kHandleBytes];
  std::uint64_t buffer_id;          // CU_POINTER_ATTRIBUTE_BUFFER_ID: unique per allocation in its process
  std::uint64_t offset;             // of the buffer from the allocation's base
  std::uint64_t allocation_address; // the allocation's base in its owner (importers spot reuse by it)
};

// The buffer ids of a rank's exported allocations it found freed, in the order found: importers
// close their mappings of them, which otherwise keep the freed memory allocated (the owner's half
// of a two-phase free, detected with buffer ids so the program need not say anything).
inline constexpr int kFreedRing = 64;
struct FreedExports {
  std::uint64_t generation;      // how many were ever found
  std::uint64_t ids[kFreedRing]; // the one found as number g is ids[g % kFreedRing]
};

enum MapState : std::int32_t {
  kMapFailed = 0,
  kMapped = 1,
  kMapDeferred = 2, // a first use: the host path while the worker opens the handles
};

struct alignas(64) RankSlot {
  std::atomic<std::uint64_t> arrived; // the last barrier number this rank reached
  std::int32_t pid;
  std::int32_t device_ok;  // 1: this rank can run the call on the runtime path
  std::int32_t decline;    // otherwise why not (a Decline value)
  std::int32_t mapped_ok;  // a MapState: whether this rank mapped every peer buffer it needs
  std::int32_t cuda_error; // the CUDA error of the kernels this rank ran for others (0: none)
  PublishedBuffer input;   // sendbuf (recvbuf for MPI_IN_PLACE)
  PublishedBuffer output;  // recvbuf
  FreedExports freed;      // as of this call
  // The hierarchical algorithm's leader: how much of its output holds the final result, as the
  // call's tag (high 32 bits) and a count of elements from the start (low 32 bits).
  std::atomic<std::uint64_t> announced;
  // The rooted collectives' pipelines (collectives/pipeline/): how many segments this rank has
  // finished, counted over every such call of the communicator (CommunicatorEngine::segment_base).
  std::atomic<std::uint64_t> segments_done;
};

// Waiting on another rank through shared memory: spin briefly, then yield, since ranks may
// outnumber cores (several ranks sharing one GPU).
void pause_spinning(int spins) noexcept;

class NodeSegment {
public:
  NodeSegment() = default;
  NodeSegment(const NodeSegment&) = delete;
  NodeSegment& operator=(const NodeSegment&) = delete;
  ~NodeSegment();

  // Collective over comm (contract::map_node_shared_memory). False on every rank when any failed; *error
  // says why.
  bool open(MPI_Comm comm, int rank, int size, std::string* error);

  RankSlot& slot(int rank) noexcept { return slots_[rank]; }
  // Marks this rank's arrival at barrier number `number` and waits for every other rank's.
  void barrier(std::uint64_t number) noexcept;

private:
  RankSlot* slots_ = nullptr;
  std::size_t bytes_ = 0;
  int rank_ = 0;
  int size_ = 0;
};

} // namespace commlens::runtime
