// p2p_check: receives sized by probes, a persistent receive, a receiver already waiting.
#include "p2p_check.hpp"

namespace p2p_check {

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
} // namespace p2p_check
