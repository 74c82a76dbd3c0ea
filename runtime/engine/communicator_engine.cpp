#include "engine/communicator_engine.hpp"

#include "mps_detection.hpp"
#include "transport/device_buffer.hpp"

#include <cuda_runtime.h>

#include <algorithm>

namespace commlens::runtime {

namespace {

// The node part of comm this rank is in: the ranks sharing memory with it, or (testing) its
// group of ranks_per_node consecutive ranks of MPI_COMM_WORLD.
MPI_Comm split_by_node(MPI_Comm comm, int ranks_per_node) {
  MPI_Comm node = MPI_COMM_NULL;
  if (ranks_per_node > 0) {
    int world_rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_split(comm, world_rank / ranks_per_node, 0, &node);
  } else {
    PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  }
  return node;
}

// The physical GPU this rank runs on, which names one GPU whatever CUDA_VISIBLE_DEVICES each rank
// was given (ranks are on one node when the engine is usable); -1 on a CUDA error.
std::int64_t current_gpu_key() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    return -1;
  }
  const auto gpu = pci_gpu_id(device);
  return gpu ? static_cast<std::int64_t>(*gpu) : -1;
}

} // namespace

std::unique_ptr<CommunicatorEngine> CommunicatorEngine::bootstrap(MPI_Comm comm, int ranks_per_node,
                                                                  bool node_part) {
  std::unique_ptr<CommunicatorEngine> engine(new CommunicatorEngine);
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter != 0) {
    engine->why_unusable_ = "inter-communicator";
    return engine;
  }
  PMPI_Comm_rank(comm, &engine->rank_);
  PMPI_Comm_size(comm, &engine->size_);
  MPI_Comm node = split_by_node(comm, ranks_per_node);
  int node_size = 0;
  PMPI_Comm_size(node, &node_size);
  // Every rank computes the same verdict from the same numbers (a node split is all-or-nothing
  // only when one node holds the whole communicator, so compare the smallest node part).
  int smallest_node = 0;
  PMPI_Allreduce(&node_size, &smallest_node, 1, MPI_INT, MPI_MIN, comm);
  if (smallest_node != engine->size_) {
    engine->split_into_nodes(comm, node, ranks_per_node);
    return engine;
  }
  PMPI_Comm_free(&node);
  // Only single-node engines run kernels over their ranks, so only they need the GPU sharing.
  engine->learn_gpu_sharing(comm);
  if (engine->size_ > kMaxRanks) {
    engine->why_unusable_ = "more than " + std::to_string(kMaxRanks) + " ranks on the node";
  } else if (engine->size_ < 2 && !node_part) {
    engine->why_unusable_ = "single-rank communicator";
  } else {
    std::string error;
    if (!engine->segment_.open(comm, engine->rank_, engine->size_, &error)) {
      engine->why_unusable_ = error;
    }
  }
  return engine;
}

// Collective over comm: the node part's own engine (bootstrapped like any single-node
// communicator) and the communicator of the node leaders (each node part's rank 0). Unusable on
// every rank when any node part is (the node engines' verdicts are agreed through MPI).
void CommunicatorEngine::split_into_nodes(MPI_Comm comm, MPI_Comm node, int ranks_per_node) {
  node_comm_ = node;
  node_engine_ = bootstrap(node, ranks_per_node, true);
  int node_rank = 0;
  PMPI_Comm_rank(node, &node_rank);
  PMPI_Comm_split(comm, node_rank == 0 ? 0 : MPI_UNDEFINED, rank_, &node_leaders_);
  int here = node_engine_->usable() ? 1 : 0, everywhere = 0;
  PMPI_Allreduce(&here, &everywhere, 1, MPI_INT, MPI_MIN, comm);
  if (everywhere == 0) {
    why_unusable_ = here == 0 ? "node part: " + node_engine_->why_unusable()
                              : std::string("a node part on another node cannot be served");
  }
}

// Collective: every rank learns every rank's GPU, so all count the GPUs and the sharing alike, and
// whether all run under MPS.
void CommunicatorEngine::learn_gpu_sharing(MPI_Comm comm) {
  const std::int64_t mine = current_gpu_key();
  std::vector<std::int64_t> keys(static_cast<std::size_t>(size_));
  PMPI_Allgather(&mine, 1, MPI_INT64_T, keys.data(), 1, MPI_INT64_T, comm);
  std::vector<std::int64_t> distinct = keys;
  std::ranges::sort(distinct);
  const auto distinct_end = std::ranges::unique(distinct).begin();
  gpu_count_ = static_cast<int>(distinct_end - distinct.begin());
  for (int rank = 0; rank < size_; ++rank) {
    const std::int64_t key = keys[static_cast<std::size_t>(rank)];
    if (key == mine) {
      ranks_on_my_gpu_.push_back(rank);
    }
    gpu_of_rank_.push_back(
        static_cast<int>(std::lower_bound(distinct.begin(), distinct_end, key) - distinct.begin()));
  }
  // A process's context joins MPS when it is made, so what the process saw first holds for it.
  static const int process_saw_mps = tuning::mps_control_daemon_running() ? 1 : 0;
  int every_rank_saw_mps = 0;
  PMPI_Allreduce(&process_saw_mps, &every_rank_saw_mps, 1, MPI_INT, MPI_MIN, comm);
  mps_ = every_rank_saw_mps != 0;
}

CommunicatorEngine::~CommunicatorEngine() {
  resident_.reset(); // its kernel leaves before the memory it serves goes
  node_engine_.reset();
  for (MPI_Comm* owned : {&node_leaders_, &node_comm_}) {
    if (*owned != MPI_COMM_NULL) {
      PMPI_Comm_free(owned);
    }
  }
  if (stream_ != nullptr) {
    cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
  }
}

void* CommunicatorEngine::stream() {
  if (stream_ == nullptr) {
    cudaStream_t stream = nullptr;
    if (cudaStreamCreate(&stream) == cudaSuccess) {
      stream_ = stream;
    }
  }
  return stream_;
}

HostStripe* CommunicatorEngine::host_stripe(MPI_Comm comm) {
  if (!stripe_tried_ && size_ == 2) {
    stripe_tried_ = true;
    auto stripe = std::make_unique<HostStripe>();
    if (stripe->open(comm, rank_)) {
      stripe_ = std::move(stripe);
    }
  }
  return stripe_.get();
}

resident::Channel* CommunicatorEngine::resident_channel(MPI_Comm comm, std::uint64_t slot_bytes,
                                                        std::uint64_t linger_ns, std::string* problem) {
  if (!resident_tried_) {
    resident_tried_ = true;
    resident_ = resident::Channel::open(comm, rank_, size_, slot_bytes, linger_ns, problem);
  }
  return resident_.get();
}

bool CommunicatorEngine::ab_turn_is_runtime(int count, MPI_Datatype datatype, MPI_Op op) {
  return ab_.runtime_turn(count, datatype, op);
}

bool CommunicatorEngine::ab_turn_is_runtime(std::uint16_t function, std::uint64_t block_bytes) {
  return ab_blocks_.runtime_turn(function, block_bytes);
}

CommunicatorEngine& EngineRegistry::engine_for(MPI_Comm comm, int ranks_per_node) {
  {
    std::lock_guard lock(mutex_);
    if (const auto found = engines_.find(comm); found != engines_.end()) {
      return *found->second;
    }
  }
  // The bootstrap is collective: run it without the lock (other threads may bootstrap other
  // communicators at the same time).
  auto engine = CommunicatorEngine::bootstrap(comm, ranks_per_node);
  std::lock_guard lock(mutex_);
  return *engines_.emplace(comm, std::move(engine)).first->second;
}

void EngineRegistry::forget(MPI_Comm comm) {
  std::lock_guard lock(mutex_);
  engines_.erase(comm);
}

void EngineRegistry::clear() {
  std::lock_guard lock(mutex_);
  engines_.clear();
}

} // namespace commlens::runtime
