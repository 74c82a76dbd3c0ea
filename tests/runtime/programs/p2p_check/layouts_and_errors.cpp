// p2p_check: non-contiguous layouts, a truncated message, MPI's progress rule, a freed send request.
#include "p2p_check.hpp"

namespace p2p_check {

namespace {

// Every other int of 2 * elements (a vector type) against `elements` contiguous ints.
// Receives into every other int (`every_other`) while the program writes the ints between them,
// which are not part of the receive buffer: after the wait both must be there. Through an
// MPI_Irecv, then a persistent receive started twice, each message sent contiguously.
void gaps_written_while_receiving(Checker& check, const Pair& pair, MPI_Datatype every_other, int elements,
                                  std::uint64_t seed) {
  const std::size_t bytes = static_cast<std::size_t>(elements) * sizeof(int);
  if (pair.first) {
    for (int message = 0; message < 3; ++message) {
      Buffer packed(true, bytes, 0);
      packed.write(pattern(seed + static_cast<std::uint64_t>(message), bytes));
      MPI_Send(packed.data(), elements, MPI_INT, pair.partner, 62, MPI_COMM_WORLD);
      check.count_rendezvous(true, bytes, true);
    }
    return;
  }
  Buffer strided(true, 2 * bytes, 0);
  MPI_Request persistent;
  MPI_Recv_init(strided.data(), 1, every_other, pair.partner, 62, MPI_COMM_WORLD, &persistent);
  for (int message = 0; message < 3; ++message) {
    MPI_Request request = persistent;
    if (message == 0) {
      MPI_Irecv(strided.data(), 1, every_other, pair.partner, 62, MPI_COMM_WORLD, &request);
    } else {
      MPI_Start(&persistent);
    }
    const auto values = pattern(seed + static_cast<std::uint64_t>(message), bytes);
    const auto between = pattern(seed + 100 + static_cast<std::uint64_t>(message), bytes);
    CUDA_CHECK(cudaMemcpy2D(strided.data() + sizeof(int), 2 * sizeof(int), between.data(), sizeof(int),
                            sizeof(int), static_cast<std::size_t>(elements), cudaMemcpyHostToDevice));
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    std::vector<unsigned char> expected(2 * bytes);
    for (int i = 0; i < elements; ++i) {
      std::memcpy(&expected[2 * i * sizeof(int)], &values[i * sizeof(int)], sizeof(int));
      std::memcpy(&expected[(2 * i + 1) * sizeof(int)], &between[i * sizeof(int)], sizeof(int));
    }
    check.expect_bytes(strided, expected, expected.size(),
                       std::string(message == 0 ? "irecv" : "persistent receive") +
                           " into a vector with the gaps written meanwhile, message " +
                           std::to_string(message));
    check.count_rendezvous(true, bytes, false);
  }
  MPI_Request_free(&persistent);
}

} // namespace

void strided_messages(Checker& check, const Pair& pair, std::uint64_t seed) {
  constexpr int kElements = 1 << 16; // 256 KiB of ints: a rendezvous when sent contiguously
  MPI_Datatype every_other;
  MPI_Type_vector(kElements, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  const auto values = pattern(seed, kElements * sizeof(int));
  std::vector<unsigned char> spread(2 * kElements * sizeof(int), 0xEE);
  for (int i = 0; i < kElements; ++i) {
    std::memcpy(&spread[2 * i * sizeof(int)], &values[i * sizeof(int)], sizeof(int));
  }
  if (pair.first) {
    Buffer strided(true, spread.size(), 0);
    strided.write(spread);
    MPI_Send(strided.data(), 1, every_other, pair.partner, 60, MPI_COMM_WORLD); // staged: not contiguous
    Buffer packed(true, values.size(), 0);
    packed.write(values);
    MPI_Send(packed.data(), kElements, MPI_INT, pair.partner, 61, MPI_COMM_WORLD);
    check.count_rendezvous(true, values.size(), true);
  } else {
    Buffer packed(true, values.size(), 0);
    MPI_Status status;
    MPI_Recv(packed.data(), kElements, MPI_INT, pair.partner, 60, MPI_COMM_WORLD, &status);
    check.expect_bytes(packed, values, values.size(), "vector send into contiguous");
    check.expect_status(status, MPI_INT, kElements, pair.partner, 60, "vector send");
    Buffer strided(true, spread.size(), 0);
    MPI_Recv(strided.data(), 1, every_other, pair.partner, 61, MPI_COMM_WORLD, &status);
    check.expect_bytes(strided, spread, spread.size(), "contiguous send into vector");
    check.expect_status(status, MPI_INT, kElements, pair.partner, 61, "contiguous into vector");
    check.count_rendezvous(true, values.size(), false);
  }
  gaps_written_while_receiving(check, pair, every_other, kElements, seed + 1);
  MPI_Type_free(&every_other);
}

void truncation(Checker& check, const Pair& pair, MPI_Comm returning, std::uint64_t seed) {
  constexpr int kSent = 1 << 20;
  if (pair.first) {
    Buffer out(true, kSent, 0);
    out.write(pattern(seed, kSent));
    MPI_Send(out.data(), kSent, MPI_BYTE, pair.partner, 70, returning);
    check.count_rendezvous(true, kSent, true);
  } else {
    Buffer in(true, kSent / 2, 0);
    MPI_Status status;
    const int rc = MPI_Recv(in.data(), kSent / 2, MPI_BYTE, pair.partner, 70, returning, &status);
    int error_class = MPI_SUCCESS;
    MPI_Error_class(rc, &error_class);
    if (error_class != MPI_ERR_TRUNCATE) {
      check.fail("a 1 MiB message into 512 KiB returned error class " + std::to_string(error_class));
    }
    check.count_rendezvous(true, kSent, false);
  }
}

// MPI's progress rule: a send whose receive is posted completes, whatever the receiver does next.
void send_while_receiver_in_barrier(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed) {
  const auto data = pattern(seed, large);
  if (pair.first) {
    Buffer out(true, large, 0);
    out.write(data);
    MPI_Send(out.data(), static_cast<int>(large), MPI_BYTE, pair.partner, 80, MPI_COMM_WORLD);
    check.count_rendezvous(true, large, true);
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    Buffer in(true, large, 0);
    MPI_Request request;
    MPI_Irecv(in.data(), static_cast<int>(large), MPI_BYTE, pair.partner, 80, MPI_COMM_WORLD, &request);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    check.expect_bytes(in, data, large, "send while the receiver is in a barrier");
    check.count_rendezvous(true, large, false);
  }
}

// MPI_Request_free on an active send: the message must still arrive whole.
void freed_send_request(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed) {
  const auto data = pattern(seed, large);
  Buffer buffer(true, large, 0);
  if (pair.first) {
    buffer.write(data);
    MPI_Request request;
    MPI_Isend(buffer.data(), static_cast<int>(large), MPI_BYTE, pair.partner, 85, MPI_COMM_WORLD, &request);
    MPI_Request_free(&request);
    check.count_rendezvous(true, large, true);
  } else {
    MPI_Recv(buffer.data(), static_cast<int>(large), MPI_BYTE, pair.partner, 85, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    check.expect_bytes(buffer, data, large, "freed send request");
    check.count_rendezvous(true, large, false);
  }
  MPI_Barrier(MPI_COMM_WORLD); // the sender's buffer lives until the receiver has the message
}
} // namespace p2p_check
