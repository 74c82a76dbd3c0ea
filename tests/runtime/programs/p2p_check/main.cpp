// Point-to-point on device buffers, checked byte for byte: what COMMLENS_RUNTIME_COLLECTIVES=p2p
// must get right whichever path (rendezvous over CUDA IPC, or host staging) each message takes.
// Ranks work in pairs (0-1, 2-3, ...); an odd last rank only joins the barriers. Per pair:
//   1. Send/Recv both ways: device to device, device to host, host to device, sizes from 1 byte
//      to LARGE bytes, unaligned offsets, a fresh allocation each message;
//   2. Isend/Irecv exchanges completed by Waitall, Waitany and a Testsome loop;
//   3. MPI_ANY_SOURCE/MPI_ANY_TAG receives whose status must report the sent size, source and tag,
//      and MPI_Probe-free ordering: three messages on one tag arrive in the order sent;
//   4. Sendrecv and Sendrecv_replace exchanges;
//   5. a non-contiguous (vector) send and a contiguous send received through a vector type, and
//      receives through that vector type (MPI_Irecv, a persistent receive) while the program
//      writes the ints between its elements;
//   6. a message too large for the receive buffer (MPI_ERR_TRUNCATE, with MPI_ERRORS_RETURN);
//   7. the pattern a sender that waited for its receiver would hang on: the receiver posts an
//      Irecv, enters MPI_Barrier, and only then waits, while the sender sends before the barrier;
//   8. an Isend whose request is freed (MPI_Request_free) before the receiver receives;
//   9. receives sized by MPI_Probe, MPI_Iprobe, MPI_Mprobe and MPI_Improbe (with MPI_Mrecv and
//      MPI_Imrecv), and MPI's order from one sender around a probe;
//  10. a persistent receive (MPI_Recv_init) started three times;
//  11. STRESS random exchanges (sizes, directions, buffer kinds);
//  12. 16 LARGE blocking sends to a receiver already waiting in MPI_Recv, alternating ways, into one reused
//      buffer: the messages a striped rendezvous serves (COMMLENS_RUNTIME_HOST_PERCENT);
//  13. the other send modes from device buffers, 1000 bytes and LARGE: MPI_Ssend and MPI_Issend
//      (which must not complete before the receive is posted: the receiver posts it 200 ms late),
//      MPI_Rsend and MPI_Irsend to a receive posted before, MPI_Bsend and MPI_Ibsend with an
//      attached buffer;
//  14. persistent sends from device buffers in each mode (MPI_Send_init, MPI_Ssend_init,
//      MPI_Rsend_init, MPI_Bsend_init), 1000 bytes and LARGE, each started three times (MPI_Start
//      twice, then MPI_Startall) with new data in the buffer each time (the buffered one once).
// Data are a hash of (seed, message); the seed is fresh each run. Each rank prints
// "rank R: rendezvous_sends S rendezvous_receives V" (the device messages, contiguous and of at
// least 64 KiB, that the runtime sends and receives as a rendezvous in `on` mode) and rank 0
// "p2p_check: ok" when every byte, status and error matched.
// Usage: p2p_check STRESS [LARGE_BYTES]. Rank r uses GPU r modulo the GPU count.
#include "p2p_check.hpp"

#include <ctime>

using namespace p2p_check;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Checker check;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &check.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int stress_calls = parse_count(argc, argv, 1, 200);
  const std::size_t large = static_cast<std::size_t>(parse_count(argc, argv, 2, 64 << 20));
  int devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  CUDA_CHECK(cudaSetDevice(check.rank % devices));

  std::uint64_t seed = static_cast<std::uint64_t>(std::time(nullptr));
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  const Pair pair{check.rank, check.rank ^ 1, check.rank % 2 == 0};
  const bool paired = pair.partner < size;
  MPI_Comm returning;
  MPI_Comm_dup(MPI_COMM_WORLD, &returning);
  MPI_Comm_set_errhandler(returning, MPI_ERRORS_RETURN);
  if (paired) {
    blocking_messages(check, pair, large, seed);
    nonblocking_exchanges(check, pair, large, seed + 1);
    wildcards_and_order(check, pair, large, seed + 2);
    sendrecv_exchanges(check, pair, large, seed + 3);
    strided_messages(check, pair, seed + 4);
    truncation(check, pair, returning, seed + 5);
    probed_receives(check, pair, large, seed + 9);
    persistent_receive(check, pair, large, seed + 10);
  }
  if (paired) {
    send_while_receiver_in_barrier(check, pair, large, seed + 6);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (paired) {
    freed_send_request(check, pair, large, seed + 8);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (paired) {
    stress(check, pair, stress_calls, large, seed + 7);
    waiting_receiver(check, pair, large, seed + 12);
    send_modes(check, pair, large, seed + 13);
    persistent_sends(check, pair, large, seed + 14);
  }
  MPI_Comm_free(&returning);

  std::printf("rank %d: rendezvous_sends %d rendezvous_receives %d failures %d\n", check.rank,
              check.rendezvous_sends, check.rendezvous_receives, check.failures);
  int failures = 0;
  MPI_Reduce(&check.failures, &failures, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (check.rank == 0) {
    std::printf(failures == 0 ? "p2p_check: ok\n" : "p2p_check: %d failures\n", failures);
  }
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
