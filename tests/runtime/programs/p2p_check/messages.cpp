// p2p_check: plain messages between the pair: blocking, nonblocking, wildcard, sendrecv, random.
#include "p2p_check.hpp"

#include <algorithm>

namespace p2p_check {

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

void pair_barrier(const Pair& pair) {
  MPI_Sendrecv(nullptr, 0, MPI_BYTE, pair.partner, 170, nullptr, 0, MPI_BYTE, pair.partner, 170,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
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
} // namespace p2p_check
