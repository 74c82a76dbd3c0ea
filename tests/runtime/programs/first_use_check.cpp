// The first call on buffers the runtime has not mapped yet, and the one after: per size, fresh
// device buffers, a first call, a pause (for the runtime's background opens), a second call on the
// same buffers; every result checked. The call is an MPI_Allreduce, or with `p2p` first a message
// from each even rank to the odd rank after it (MPI_Send into a posted MPI_Irecv, timed_message
// below). This runs twice per size: a warm-up round (kernel modules load, the host path's pinned
// pool grows to the size, the first IPC open initialises the driver's IPC state), then the timed
// round, so that the first call's time is the opens' alone. With COMMLENS_RUNTIME_BACKGROUND_OPENS=1
// the runtime runs a small first call on the host path while the peers' CUDA IPC handles open on
// its worker thread (about 2.3 ms each between GPUs), and the second call finds them mapped; with 0
// the first call waits for the opens. The buffers of every size stay allocated to the end: a new
// buffer at the address of one a peer mapped before is opened by the call itself (docs/runtime.md
// says why). Rank 0 prints "bytes B first_us F second_us S" per size (the call's time, as
// timed_allreduce and timed_message say) and "first_use_check: ok" when every result matched.
// Usage: first_use_check [p2p] [SIZES...] (bytes, multiples of 4; default 8 65536 1048576). Rank r
// uses GPU r modulo the GPU count.
#include "gpu_job.hpp"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <thread>
#include <vector>

namespace {

enum class Operation { Allreduce, PointToPoint };

// Element i of rank r's send buffer.
std::int32_t element(int rank, int i) {
  return (rank + 1) * (i % 13);
}

// Counts the elements of recv (on the device) that differ from expected(i).
template <typename Expected>
void check_result(const std::int32_t* recv, int count, Expected expected, long* failures) {
  std::vector<std::int32_t> got(static_cast<std::size_t>(count));
  CUDA_CHECK(cudaMemcpy(got.data(), recv, got.size() * sizeof(std::int32_t), cudaMemcpyDeviceToHost));
  for (int i = 0; i < count; ++i) {
    *failures += got[static_cast<std::size_t>(i)] != expected(i);
  }
}

// One checked allreduce: every rank's result is the sum of every rank's elements. Its time is
// the slowest rank's.
double timed_allreduce(const std::int32_t* send, std::int32_t* recv, int count, int size, long* failures) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  *failures += MPI_Allreduce(send, recv, count, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS;
  const double took = MPI_Wtime() - start;
  check_result(
      recv, count, [&](int i) { return size * (size + 1) / 2 * (i % 13); }, failures);
  return slowest_rank(took);
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One checked message from each even rank to the odd rank after it (an unpaired last rank only
// takes part in the timing). The sender starts 1 ms after the barrier, so its receiver is waiting
// in MPI_Wait when the rendezvous header arrives (a first use as in Faraji and Afsahi's Dynamic selection: a
// receiver arriving after the sender's patience finds the message moved into the sender's block instead). Its
// time runs from the senders' start to the last rank's end, on the node's one steady clock.
double timed_message(const std::int32_t* send, std::int32_t* recv, int count, int rank, int size,
                     long* failures) {
  const bool receives = rank % 2 == 1;
  const bool sends = rank % 2 == 0 && rank + 1 < size;
  MPI_Request request = MPI_REQUEST_NULL;
  if (receives) {
    MPI_Irecv(recv, count, MPI_INT32_T, rank - 1, 0, MPI_COMM_WORLD, &request);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double start = 0;
  if (sends) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    start = steady_seconds();
    *failures += MPI_Send(send, count, MPI_INT32_T, rank + 1, 0, MPI_COMM_WORLD) != MPI_SUCCESS;
  }
  *failures += MPI_Wait(&request, MPI_STATUS_IGNORE) != MPI_SUCCESS;
  const double times[2] = {start, steady_seconds()};
  double latest[2] = {0, 0};
  MPI_Allreduce(times, latest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (receives) {
    check_result(
        recv, count, [&](int i) { return element(rank - 1, i); }, failures);
  }
  return latest[1] - latest[0];
}

double timed_call(Operation operation, const std::int32_t* send, std::int32_t* recv, int count, int rank,
                  int size, long* failures) {
  return operation == Operation::Allreduce ? timed_allreduce(send, recv, count, size, failures)
                                           : timed_message(send, recv, count, rank, size, failures);
}

// Fresh buffers of `bytes`, a first call, a pause, a second call; rank 0 prints the times when
// `timed`. The buffers are kept (in *allocations) until the end.
void first_and_second_call(Operation operation, std::size_t bytes, int rank, int size, bool timed,
                           long* failures, std::vector<void*>* allocations) {
  const int count = static_cast<int>(bytes / sizeof(std::int32_t));
  std::vector<std::int32_t> mine(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    mine[static_cast<std::size_t>(i)] = element(rank, i);
  }
  std::int32_t* send = nullptr;
  std::int32_t* recv = nullptr;
  CUDA_CHECK(cudaMalloc(&send, bytes));
  CUDA_CHECK(cudaMalloc(&recv, bytes));
  CUDA_CHECK(cudaMemcpy(send, mine.data(), bytes, cudaMemcpyHostToDevice));
  const double first = timed_call(operation, send, recv, count, rank, size, failures);
  std::this_thread::sleep_for(std::chrono::milliseconds(200)); // the background opens finish
  CUDA_CHECK(cudaMemset(recv, 0, bytes));
  const double second = timed_call(operation, send, recv, count, rank, size, failures);
  if (rank == 0 && timed) {
    std::printf("bytes %zu first_us %.1f second_us %.1f\n", bytes, first * 1e6, second * 1e6);
  }
  allocations->insert(allocations->end(), {send, recv});
}

} // namespace

int main(int argc, char** argv) {
  const auto [rank, size, devices] = join_gpu_job(&argc, &argv);
  CUDA_CHECK(cudaSetDevice(rank % devices));
  int first_size = 1;
  Operation operation = Operation::Allreduce;
  if (argc > 1 && std::string_view(argv[1]) == "p2p") {
    operation = Operation::PointToPoint;
    first_size = 2;
  }
  std::vector<std::size_t> sizes;
  for (int i = first_size; i < argc; ++i) {
    sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  }
  if (sizes.empty()) {
    sizes = {8, 65536, 1048576};
  }
  long failures = 0;
  std::vector<void*> allocations;
  for (const bool timed : {false, true}) {
    for (const std::size_t bytes : sizes) {
      first_and_second_call(operation, bytes, rank, size, timed, &failures, &allocations);
    }
  }
  for (void* allocation : allocations) {
    CUDA_CHECK(cudaFree(allocation));
  }
  long all_failures = 0;
  MPI_Reduce(&failures, &all_failures, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("first_use_check: %s (%ld failures)\n", all_failures == 0 ? "ok" : "FAILED", all_failures);
  }
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
