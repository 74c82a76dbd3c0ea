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
#include "cuda_check.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kRendezvousMinBytes = 64 << 10; // runtime/point_to_point/rendezvous_protocol.hpp

std::uint32_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return static_cast<std::uint32_t>(x ^ (x >> 31));
}

std::vector<unsigned char> pattern(std::uint64_t seed, std::size_t bytes) {
  std::vector<unsigned char> data(bytes);
  for (std::size_t i = 0; i < bytes; i += 4) {
    const std::uint32_t word = mix(seed * 0x100000001b3ull + i);
    std::memcpy(data.data() + i, &word, std::min<std::size_t>(4, bytes - i));
  }
  return data;
}

// A buffer of one kind with `offset` bytes of slack in front (unaligned starts).
struct Buffer {
  bool device = false;
  unsigned char* base = nullptr;
  std::size_t offset = 0;
  std::size_t bytes = 0;

  Buffer(bool on_device, std::size_t size, std::size_t start)
      : device(on_device), offset(start), bytes(size) {
    const std::size_t total = size + start + 16;
    if (device) {
      CUDA_CHECK(cudaMalloc(&base, total));
      CUDA_CHECK(cudaMemset(base, 0xEE, total));
    } else {
      base = static_cast<unsigned char*>(std::malloc(total));
      std::memset(base, 0xEE, total);
    }
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (device) {
      cudaFree(base);
    } else {
      std::free(base);
    }
  }
  unsigned char* data() const { return base + offset; }
  void write(const std::vector<unsigned char>& bytes_in) const {
    if (device) {
      CUDA_CHECK(cudaMemcpy(data(), bytes_in.data(), bytes_in.size(), cudaMemcpyHostToDevice));
    } else {
      std::memcpy(data(), bytes_in.data(), bytes_in.size());
    }
  }
  // Everything from the base: the slack and the bytes past the message must be untouched.
  std::vector<unsigned char> read_all() const {
    std::vector<unsigned char> all(bytes + offset + 16);
    if (device) {
      CUDA_CHECK(cudaMemcpy(all.data(), base, all.size(), cudaMemcpyDeviceToHost));
    } else {
      std::memcpy(all.data(), base, all.size());
    }
    return all;
  }
};

struct Checker {
  int rank = 0;
  int failures = 0;
  int rendezvous_sends = 0;
  int rendezvous_receives = 0;

  void fail(const std::string& what) {
    if (failures++ < 20) {
      std::fprintf(stderr, "rank %d: %s\n", rank, what.c_str());
    }
  }
  // The received buffer holds `expected` at its start, 0xEE elsewhere.
  void expect_bytes(const Buffer& buffer, const std::vector<unsigned char>& expected, std::size_t filled,
                    const std::string& what) {
    const std::vector<unsigned char> all = buffer.read_all();
    for (std::size_t i = 0; i < all.size(); ++i) {
      const bool in_message = i >= buffer.offset && i < buffer.offset + filled;
      const unsigned char want = in_message ? expected[i - buffer.offset] : 0xEE;
      if (all[i] != want) {
        fail(what + ": byte " + std::to_string(i) + " differs");
        return;
      }
    }
  }
  void expect_status(const MPI_Status& status, MPI_Datatype type, int count, int source, int tag,
                     const std::string& what) {
    int got = -1;
    MPI_Get_count(&status, type, &got);
    if (got != count || status.MPI_SOURCE != source || status.MPI_TAG != tag) {
      fail(what + ": status count " + std::to_string(got) + " source " + std::to_string(status.MPI_SOURCE) +
           " tag " + std::to_string(status.MPI_TAG) + ", expected " + std::to_string(count) + " " +
           std::to_string(source) + " " + std::to_string(tag));
    }
  }
  void count_rendezvous(bool sender_device, std::size_t bytes, bool sending) {
    if (sender_device && bytes >= kRendezvousMinBytes) {
      ++(sending ? rendezvous_sends : rendezvous_receives);
    }
  }
};

struct Pair {
  int me;
  int partner;
  bool first; // the lower rank of the pair
};

// One message from `from` to `to` of `bytes` bytes (MPI_BYTE), kinds given; both ranks call it.
void one_message(Checker& check, const Pair& pair, bool i_send, bool send_device, bool recv_device,
                 std::size_t bytes, std::size_t offset, std::uint64_t seed, int tag) {
  const auto data = pattern(seed, bytes);
  const int count = static_cast<int>(bytes);
  if (i_send) {
    Buffer buffer(send_device, bytes, offset);
    buffer.write(data);
    MPI_Send(buffer.data(), count, MPI_BYTE, pair.partner, tag, MPI_COMM_WORLD);
    check.count_rendezvous(send_device, bytes, true);
  } else {
    Buffer buffer(recv_device, bytes, offset);
    MPI_Status status;
    MPI_Recv(buffer.data(), count, MPI_BYTE, pair.partner, tag, MPI_COMM_WORLD, &status);
    const std::string what = "send/recv " + std::to_string(bytes) + " B " + (send_device ? "D" : "H") + "->" +
                             (recv_device ? "D" : "H");
    check.expect_bytes(buffer, data, bytes, what);
    check.expect_status(status, MPI_BYTE, count, pair.partner, tag, what);
    check.count_rendezvous(send_device, bytes, false);
  }
}

void blocking_messages(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed) {
  const std::size_t sizes[] = {1,    7, 4099, kRendezvousMinBytes - 1, kRendezvousMinBytes, (1 << 20) + 3,
                               large};
  int message = 0;
  for (const std::size_t bytes : sizes) {
    for (const auto& [send_device, recv_device] : {std::pair{true, true}, {true, false}, {false, true}}) {
      for (const bool lower_sends : {true, false}) {
        const std::size_t offset = static_cast<std::size_t>(message % 3) * 4 + (message % 2);
        one_message(check, pair, lower_sends == pair.first, send_device, recv_device, bytes, offset,
                    seed + static_cast<std::uint64_t>(message), 100 + message % 5);
        ++message;
      }
    }
  }
}

// Both ranks send to each other at once; `complete` finishes the two requests.
template <typename Complete>
void exchange(Checker& check, const Pair& pair, std::size_t bytes, std::uint64_t seed,
              const std::string& name, Complete complete) {
  const auto mine = pattern(seed + static_cast<std::uint64_t>(pair.me), bytes);
  const auto theirs = pattern(seed + static_cast<std::uint64_t>(pair.partner), bytes);
  Buffer out(true, bytes, 0);
  Buffer in(true, bytes, 4);
  out.write(mine);
  MPI_Request requests[2];
  MPI_Irecv(in.data(), static_cast<int>(bytes), MPI_BYTE, pair.partner, 7, MPI_COMM_WORLD, &requests[0]);
  MPI_Isend(out.data(), static_cast<int>(bytes), MPI_BYTE, pair.partner, 7, MPI_COMM_WORLD, &requests[1]);
  MPI_Status statuses[2];
  complete(requests, statuses);
  check.expect_bytes(in, theirs, bytes, name + " " + std::to_string(bytes) + " B");
  check.expect_status(statuses[0], MPI_BYTE, static_cast<int>(bytes), pair.partner, 7, name);
  check.count_rendezvous(true, bytes, true);
  check.count_rendezvous(true, bytes, false);
}

void nonblocking_exchanges(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed) {
  for (const std::size_t bytes : {std::size_t{12}, kRendezvousMinBytes, (std::size_t{3} << 20) + 5, large}) {
    exchange(check, pair, bytes, seed, "waitall",
             [](MPI_Request* requests, MPI_Status* statuses) { MPI_Waitall(2, requests, statuses); });
    exchange(check, pair, bytes, seed + 11, "waitany", [](MPI_Request* requests, MPI_Status* statuses) {
      for (int done = 0; done < 2; ++done) {
        int index = -1;
        MPI_Status status;
        MPI_Waitany(2, requests, &index, &status);
        statuses[index] = status;
      }
    });
    exchange(check, pair, bytes, seed + 23, "testsome", [](MPI_Request* requests, MPI_Status* statuses) {
      int remaining = 2;
      while (remaining > 0) {
        int outcount = 0;
        int indices[2];
        MPI_Status some[2];
        MPI_Testsome(2, requests, &outcount, indices, some);
        for (int i = 0; i < outcount && outcount != MPI_UNDEFINED; ++i) {
          statuses[indices[i]] = some[i];
          --remaining;
        }
      }
    });
  }
}

// Wildcard receives see the real size, source and tag; three messages on one tag keep their order.
void wildcards_and_order(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed) {
  const std::size_t sizes[] = {large, 100, (1 << 20) + 1};
  if (pair.first) {
    for (int i = 0; i < 3; ++i) {
      Buffer out(true, sizes[i], 0);
      out.write(pattern(seed + static_cast<std::uint64_t>(i), sizes[i]));
      MPI_Send(out.data(), static_cast<int>(sizes[i]), MPI_BYTE, pair.partner, 40 + (i == 1 ? 1 : 0),
               MPI_COMM_WORLD);
      check.count_rendezvous(true, sizes[i], true);
    }
    return;
  }
  for (int i = 0; i < 3; ++i) {
    Buffer in(i % 2 == 0, large, 0);
    MPI_Status status;
    MPI_Recv(in.data(), static_cast<int>(large), MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
             &status);
    const std::string what = "wildcard message " + std::to_string(i);
    check.expect_status(status, MPI_BYTE, static_cast<int>(sizes[i]), pair.partner, 40 + (i == 1 ? 1 : 0),
                        what);
    check.expect_bytes(in, pattern(seed + static_cast<std::uint64_t>(i), sizes[i]), sizes[i], what);
    check.count_rendezvous(true, sizes[i], false);
  }
}

void sendrecv_exchanges(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed) {
  for (const std::size_t bytes : {std::size_t{33}, large}) {
    const auto mine = pattern(seed + static_cast<std::uint64_t>(pair.me), bytes);
    const auto theirs = pattern(seed + static_cast<std::uint64_t>(pair.partner), bytes);
    Buffer out(true, bytes, 0);
    Buffer in(true, bytes, 8);
    out.write(mine);
    MPI_Status status;
    MPI_Sendrecv(out.data(), static_cast<int>(bytes), MPI_BYTE, pair.partner, 50, in.data(),
                 static_cast<int>(bytes), MPI_BYTE, pair.partner, 50, MPI_COMM_WORLD, &status);
    check.expect_bytes(in, theirs, bytes, "sendrecv " + std::to_string(bytes) + " B");
    check.expect_status(status, MPI_BYTE, static_cast<int>(bytes), pair.partner, 50, "sendrecv");
    check.count_rendezvous(true, bytes, true);
    check.count_rendezvous(true, bytes, false);

    Buffer both(true, bytes, 0);
    both.write(mine);
    MPI_Sendrecv_replace(both.data(), static_cast<int>(bytes), MPI_BYTE, pair.partner, 51, pair.partner, 51,
                         MPI_COMM_WORLD, &status);
    check.expect_bytes(both, theirs, bytes, "sendrecv_replace " + std::to_string(bytes) + " B");
    check.expect_status(status, MPI_BYTE, static_cast<int>(bytes), pair.partner, 51, "sendrecv_replace");
  }
}

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

// returning: a communicator with MPI_ERRORS_RETURN.
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

// Receives sized by a probe: every probe must see the data's size, never that of the rendezvous
// header sent in its place, and MPI's order from one sender must hold around a probe.
void probed_receives(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed) {
  constexpr std::size_t kHeaderSize = 128; // a rendezvous header's size: plain messages of it too
  struct Message {
    std::size_t bytes;
    bool device;
    int tag;
  };
  const Message messages[] = {
      {large, true, 150},                // 0: Probe, then Recv
      {kHeaderSize, false, 151},         // 1: Iprobe, then Recv as ints
      {(1 << 20) + 3, true, 152},        // 2: Mprobe, then Mrecv
      {128 << 10, true, 153},            // 3: Improbe, then Imrecv into host memory
      {kHeaderSize, false, 154},         // 4: Mprobe, then Mrecv into device memory
      {100, false, 155},                 // 5: older than 6 with another tag: received after 6's probe
      {large / 2 + 1, true, 156},        // 6: probed first
      {200, false, 155},                 // 7: newer than 6, tag of 5
      {std::size_t{1} << 18, true, 157}, // 8: Probe, then Irecv
  };
  const auto data = [&](int i) { return pattern(seed + static_cast<std::uint64_t>(i), messages[i].bytes); };
  if (pair.first) {
    for (int i = 0; i < static_cast<int>(std::size(messages)); ++i) {
      Buffer out(messages[i].device, messages[i].bytes, 0);
      out.write(data(i));
      MPI_Send(out.data(), static_cast<int>(messages[i].bytes), MPI_BYTE, pair.partner, messages[i].tag,
               MPI_COMM_WORLD);
      check.count_rendezvous(messages[i].device, messages[i].bytes, true);
    }
    return;
  }
  const auto expect = [&](int i, const Buffer& in, const MPI_Status& status, const std::string& what) {
    check.expect_bytes(in, data(i), messages[i].bytes, what);
    check.expect_status(status, MPI_BYTE, static_cast<int>(messages[i].bytes), pair.partner, messages[i].tag,
                        what);
    check.count_rendezvous(messages[i].device, messages[i].bytes, false);
  };
  const auto probed_size = [&](int i, const MPI_Status& status, const std::string& what) {
    check.expect_status(status, MPI_BYTE, static_cast<int>(messages[i].bytes), pair.partner, messages[i].tag,
                        what);
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    return static_cast<std::size_t>(std::max(count, 1));
  };
  MPI_Status probed;
  MPI_Status status;
  MPI_Probe(MPI_ANY_SOURCE, 150, MPI_COMM_WORLD, &probed);
  {
    Buffer in(true, probed_size(0, probed, "MPI_Probe"), 0);
    MPI_Recv(in.data(), static_cast<int>(in.bytes), MPI_BYTE, probed.MPI_SOURCE, probed.MPI_TAG,
             MPI_COMM_WORLD, &status);
    expect(0, in, status, "Probe then Recv");
  }
  for (int flag = 0; flag == 0;) {
    MPI_Iprobe(pair.partner, 151, MPI_COMM_WORLD, &flag, &probed);
  }
  {
    Buffer in(false, probed_size(1, probed, "MPI_Iprobe"), 0);
    MPI_Recv(in.data(), static_cast<int>(kHeaderSize / sizeof(int)), MPI_INT, pair.partner, 151,
             MPI_COMM_WORLD, &status);
    check.expect_bytes(in, data(1), kHeaderSize, "Iprobe then Recv");
    check.expect_status(status, MPI_INT, kHeaderSize / sizeof(int), pair.partner, 151, "Iprobe then Recv");
  }
  for (const auto& [i, device] : {std::pair{2, true}, {4, true}}) {
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Mprobe(pair.partner, messages[i].tag, MPI_COMM_WORLD, &message, &probed);
    Buffer in(device, probed_size(i, probed, "MPI_Mprobe"), 0);
    MPI_Mrecv(in.data(), static_cast<int>(in.bytes), MPI_BYTE, &message, &status);
    expect(i, in, status, "Mprobe then Mrecv");
    if (message != MPI_MESSAGE_NULL) {
      check.fail("MPI_Mrecv left its message handle set");
    }
  }
  {
    MPI_Message message = MPI_MESSAGE_NULL;
    for (int flag = 0; flag == 0;) {
      MPI_Improbe(MPI_ANY_SOURCE, 153, MPI_COMM_WORLD, &flag, &message, &probed);
    }
    Buffer in(false, probed_size(3, probed, "MPI_Improbe"), 0);
    MPI_Request request;
    MPI_Imrecv(in.data(), static_cast<int>(in.bytes), MPI_BYTE, &message, &request);
    MPI_Wait(&request, &status);
    expect(3, in, status, "Improbe then Imrecv");
  }
  MPI_Probe(pair.partner, 156, MPI_COMM_WORLD, &probed);
  {
    Buffer older(false, 200, 0);
    MPI_Recv(older.data(), 200, MPI_BYTE, pair.partner, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
    expect(5, older, status, "the older message after a probe of a newer one");
    Buffer newer(false, 200, 0);
    MPI_Recv(newer.data(), 200, MPI_BYTE, pair.partner, 155, MPI_COMM_WORLD, &status);
    expect(7, newer, status, "a message newer than the probed one");
    Buffer in(true, probed_size(6, probed, "MPI_Probe past an older message"), 0);
    MPI_Recv(in.data(), static_cast<int>(in.bytes), MPI_BYTE, pair.partner, 156, MPI_COMM_WORLD, &status);
    expect(6, in, status, "the probed message after older and newer ones");
  }
  MPI_Probe(pair.partner, 157, MPI_COMM_WORLD, &probed);
  {
    Buffer in(true, probed_size(8, probed, "MPI_Probe before MPI_Irecv"), 0);
    MPI_Request request;
    MPI_Irecv(in.data(), static_cast<int>(in.bytes), MPI_BYTE, pair.partner, 157, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, &status);
    expect(8, in, status, "Probe then Irecv");
  }
}

// A persistent receive started three times: each message must arrive whole, rendezvous or not.
void persistent_receive(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed) {
  const std::size_t sizes[] = {large, 100, (std::size_t{1} << 20) + 7};
  if (pair.first) {
    for (int i = 0; i < 3; ++i) {
      Buffer out(true, sizes[i], 0);
      out.write(pattern(seed + static_cast<std::uint64_t>(i), sizes[i]));
      MPI_Send(out.data(), static_cast<int>(sizes[i]), MPI_BYTE, pair.partner, 160, MPI_COMM_WORLD);
      check.count_rendezvous(true, sizes[i], true);
    }
    return;
  }
  Buffer in(true, large, 0);
  MPI_Request request;
  MPI_Recv_init(in.data(), static_cast<int>(large), MPI_BYTE, pair.partner, 160, MPI_COMM_WORLD, &request);
  for (int i = 0; i < 3; ++i) {
    CUDA_CHECK(cudaMemset(in.base, 0xEE, large + 16));
    MPI_Start(&request);
    MPI_Status status;
    MPI_Wait(&request, &status);
    const std::string what = "persistent receive " + std::to_string(i);
    check.expect_bytes(in, pattern(seed + static_cast<std::uint64_t>(i), sizes[i]), sizes[i], what);
    check.expect_status(status, MPI_BYTE, static_cast<int>(sizes[i]), pair.partner, 160, what);
    check.count_rendezvous(true, sizes[i], false);
  }
  MPI_Request_free(&request);
}

// Both ranks of the pair are here.
void pair_barrier(const Pair& pair) {
  MPI_Sendrecv(nullptr, 0, MPI_BYTE, pair.partner, 170, nullptr, 0, MPI_BYTE, pair.partner, 170,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

void waiting_receiver(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed) {
  Buffer out(true, large, 0);
  Buffer in(true, large, 8);
  const int count = static_cast<int>(large);
  for (int message = 0; message < 16; ++message) {
    const bool i_send = (message % 2 == 0) == pair.first;
    const auto data = pattern(seed + static_cast<std::uint64_t>(message), large);
    if (i_send) {
      out.write(data);
    }
    pair_barrier(pair); // the receiver enters MPI_Recv as the sender sends
    if (i_send) {
      MPI_Send(out.data(), count, MPI_BYTE, pair.partner, 171, MPI_COMM_WORLD);
    } else {
      MPI_Status status;
      MPI_Recv(in.data(), count, MPI_BYTE, pair.partner, 171, MPI_COMM_WORLD, &status);
      check.expect_bytes(in, data, large, "waiting receiver, message " + std::to_string(message));
      check.expect_status(status, MPI_BYTE, count, pair.partner, 171, "waiting receiver");
    }
    check.count_rendezvous(true, large, i_send);
  }
}

struct SendMode {
  const char* name;
  int (*blocking)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
  int (*nonblocking)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  bool synchronous;
  bool ready;
};

void send_in_mode(const SendMode& mode, const Buffer& buffer, int count, int dest, int tag) {
  if (mode.blocking != nullptr) {
    mode.blocking(buffer.data(), count, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
    return;
  }
  MPI_Request request;
  mode.nonblocking(buffer.data(), count, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}

void send_modes(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed) {
  const SendMode modes[] = {
      {"MPI_Ssend", MPI_Ssend, nullptr, true, false},  {"MPI_Issend", nullptr, MPI_Issend, true, false},
      {"MPI_Rsend", MPI_Rsend, nullptr, false, true},  {"MPI_Irsend", nullptr, MPI_Irsend, false, true},
      {"MPI_Bsend", MPI_Bsend, nullptr, false, false}, {"MPI_Ibsend", nullptr, MPI_Ibsend, false, false}};
  // Room for two messages: a buffered send's copy may stay until MPI has delivered it.
  std::vector<char> attached(2 * (large + MPI_BSEND_OVERHEAD) + (1 << 20));
  MPI_Buffer_attach(attached.data(), static_cast<int>(attached.size()));
  int message = 0;
  for (const std::size_t bytes : {std::size_t{1000}, large}) {
    const int count = static_cast<int>(bytes);
    for (const SendMode& mode : modes) {
      for (const bool lower_sends : {true, false}) {
        const bool i_send = lower_sends == pair.first;
        const auto data = pattern(seed + static_cast<std::uint64_t>(message), bytes);
        const int tag = 180 + message % 7;
        const std::string what = std::string(mode.name) + " " + std::to_string(bytes) + " B";
        Buffer buffer(true, bytes, static_cast<std::size_t>(message % 4));
        if (i_send) {
          buffer.write(data);
          pair_barrier(pair);
          const double start = MPI_Wtime();
          send_in_mode(mode, buffer, count, pair.partner, tag);
          if (mode.synchronous && MPI_Wtime() - start < 0.1) {
            check.fail(what + ": completed before the receive was posted");
          }
        } else {
          MPI_Request request = MPI_REQUEST_NULL;
          if (mode.ready) { // a ready send needs its receive posted
            MPI_Irecv(buffer.data(), count, MPI_BYTE, pair.partner, tag, MPI_COMM_WORLD, &request);
          }
          pair_barrier(pair);
          if (mode.synchronous) {
            usleep(200000);
          }
          if (!mode.ready) {
            MPI_Irecv(buffer.data(), count, MPI_BYTE, pair.partner, tag, MPI_COMM_WORLD, &request);
          }
          MPI_Status status;
          MPI_Wait(&request, &status);
          check.expect_bytes(buffer, data, bytes, what);
          check.expect_status(status, MPI_BYTE, count, pair.partner, tag, what);
        }
        check.count_rendezvous(true, bytes, i_send);
        ++message;
      }
    }
  }
  void* detached = nullptr;
  int detached_bytes = 0;
  MPI_Buffer_detach(&detached, &detached_bytes);
}

void persistent_sends(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed) {
  struct PersistentMode {
    const char* name;
    int (*init)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
    int starts;
  };
  // A persistent buffered send is started once: Open MPI 4.1 before its fix (open-mpi/ompi#14366)
  // sends the first start's data again at every later start of a large one.
  const PersistentMode modes[] = {{"MPI_Send_init", MPI_Send_init, 3},
                                  {"MPI_Ssend_init", MPI_Ssend_init, 3},
                                  {"MPI_Rsend_init", MPI_Rsend_init, 3},
                                  {"MPI_Bsend_init", MPI_Bsend_init, 1}};
  std::vector<char> attached(2 * (large + MPI_BSEND_OVERHEAD) + (1 << 20));
  MPI_Buffer_attach(attached.data(), static_cast<int>(attached.size()));
  int message = 0;
  for (const std::size_t bytes : {std::size_t{1000}, large}) {
    const int count = static_cast<int>(bytes);
    for (const auto& [name, init, starts] : modes) {
      for (const bool lower_sends : {true, false}) {
        const bool i_send = lower_sends == pair.first;
        const int tag = 190 + message % 7;
        Buffer buffer(true, bytes, static_cast<std::size_t>(message % 4));
        MPI_Request request;
        if (i_send) {
          init(buffer.data(), count, MPI_BYTE, pair.partner, tag, MPI_COMM_WORLD, &request);
        }
        for (int start = 0; start < starts; ++start) {
          const auto data = pattern(seed + static_cast<std::uint64_t>(message * 3 + start), bytes);
          const std::string what =
              std::string(name) + " " + std::to_string(bytes) + " B, start " + std::to_string(start);
          if (i_send) {
            buffer.write(data);
            pair_barrier(pair); // the receive is posted (as a ready send needs)
            if (start < 2) {
              MPI_Start(&request);
            } else {
              MPI_Startall(1, &request);
            }
            MPI_Wait(&request, MPI_STATUS_IGNORE);
          } else {
            MPI_Request receive;
            MPI_Irecv(buffer.data(), count, MPI_BYTE, pair.partner, tag, MPI_COMM_WORLD, &receive);
            pair_barrier(pair);
            MPI_Status status;
            MPI_Wait(&receive, &status);
            check.expect_bytes(buffer, data, bytes, what);
            check.expect_status(status, MPI_BYTE, count, pair.partner, tag, what);
          }
        }
        if (i_send) {
          MPI_Request_free(&request);
        }
        ++message;
      }
    }
  }
  void* detached = nullptr;
  int detached_bytes = 0;
  MPI_Buffer_detach(&detached, &detached_bytes);
}

void stress(Checker& check, const Pair& pair, int calls, std::size_t large, std::uint64_t seed) {
  for (int call = 0; call < calls; ++call) {
    const std::uint32_t dice = mix(seed ^ (static_cast<std::uint64_t>(call) << 20));
    const std::size_t bytes = 1 + dice % (dice % 4 == 0 ? large : 200000);
    const bool send_device = (dice >> 8) % 4 != 0;
    const bool recv_device = (dice >> 10) % 4 != 0;
    one_message(check, pair, ((dice >> 12) % 2 == 0) == pair.first, send_device, recv_device, bytes,
                (dice >> 14) % 8, seed + 1000 + static_cast<std::uint64_t>(call), 90);
  }
}

} // namespace

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
