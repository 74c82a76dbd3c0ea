// Point-to-point on a ring (each rank sends to the next and receives from the previous):
// MPI_Sendrecv, MPI_Isend/MPI_Irecv completed by MPI_Waitall in either order, persistent requests
// started twice, and MPI_Mprobe/MPI_Mrecv. The message from rank r holds fill(r, ...).
#include "fuzz_operations.hpp"

namespace fuzz {

namespace {

struct Ring {
  const TypeInfo& type;
  std::uint64_t salt;
  std::size_t count;
  int right;
  int left;
  int tag;
};

Ring draw_ring(Context& context, const Communicator& c) {
  const TypeInfo& type = context.draw_type();
  const std::uint64_t salt = context.sequence();
  const std::size_t count = context.fit(context.draw_count(), type, 1);
  const int tag = static_cast<int>(context.draw(1000));
  return {type, salt, count, (c.rank + 1) % c.size, (c.rank + c.size - 1) % c.size, tag};
}

std::vector<char> message(const Ring& ring, int from) {
  return host_fill(ring.type, MPI_SUM, ring.salt, from, 0, ring.count);
}

Buffer outgoing(Context& context, const Ring& ring, int rank) {
  const std::size_t size = static_cast<std::size_t>(ring.type.size);
  Buffer buffer = context.buffers.make(ring.count * size, size, context.buffers.draw_memory());
  const std::vector<char> data = message(ring, rank);
  BufferFactory::write(buffer, 0, data.data(), data.size());
  return buffer;
}

Buffer incoming(Context& context, const Ring& ring) {
  const std::size_t size = static_cast<std::size_t>(ring.type.size);
  Buffer buffer = context.buffers.make(ring.count * size, size, context.buffers.draw_memory());
  const std::vector<char> garbage(ring.count * size, static_cast<char>(0x3C));
  BufferFactory::write(buffer, 0, garbage.data(), garbage.size());
  return buffer;
}

std::string describe(const char* function, const Ring& ring, const Buffer& send, const Buffer& recv,
                     const Communicator& c) {
  return std::string(function) + " " + ring.type.name + " count " + std::to_string(ring.count) +
         " send=" + memory_name(send.memory) + " recv=" + memory_name(recv.memory) + " comm=" + c.name;
}

long long bytes(const Ring& ring) {
  return static_cast<long long>(ring.count) * ring.type.size;
}

// One exchange on the ring: its draw, its buffers (the message filled in, the receive buffer
// poisoned), its description and its count as MPI takes it.
struct Exchange {
  Ring ring;
  Buffer send;
  Buffer recv;
  std::string what;
  int count;
};

Exchange begin(Context& context, const Communicator& c, const char* functions) {
  const Ring ring = draw_ring(context, c);
  Buffer send = outgoing(context, ring, c.rank);
  Buffer recv = incoming(context, ring);
  return {ring, send, recv, describe(functions, ring, send, recv, c), static_cast<int>(ring.count)};
}

void release(Context& context, Exchange& x) {
  context.buffers.release(x.send);
  context.buffers.release(x.recv);
}

void finish(Context& context, Exchange& x) {
  expect_elements(context, x.recv, 0, x.ring.count, x.ring.type, message(x.ring, x.ring.left), x.what);
  release(context, x);
}

void sendrecv(Context& context, const Communicator& c) {
  Exchange x = begin(context, c, "MPI_Sendrecv");
  const Ring& ring = x.ring;
  context.expect_ok(MPI_Sendrecv(x.send.data, x.count, ring.type.type, ring.right, ring.tag, x.recv.data,
                                 x.count, ring.type.type, ring.left, ring.tag, c.comm, MPI_STATUS_IGNORE),
                    x.what);
  context.log.call("MPI_Sendrecv", bytes(ring), bytes(ring), recorded_location(x.send.memory), ring.type.name,
                   c.world_ranks[ring.right]);
  finish(context, x);
}

void nonblocking(Context& context, const Communicator& c) {
  Exchange x = begin(context, c, "MPI_Isend/MPI_Irecv");
  const Ring& ring = x.ring;
  const bool receive_first = context.draw(2) == 0;
  MPI_Request requests[2];
  const auto post_receive = [&](MPI_Request* request) {
    context.expect_ok(MPI_Irecv(x.recv.data, x.count, ring.type.type, ring.left, ring.tag, c.comm, request),
                      x.what);
    context.log.call("MPI_Irecv", 0, bytes(ring), recorded_location(x.recv.memory), ring.type.name,
                     c.world_ranks[ring.left]);
  };
  const auto post_send = [&](MPI_Request* request) {
    context.expect_ok(MPI_Isend(x.send.data, x.count, ring.type.type, ring.right, ring.tag, c.comm, request),
                      x.what);
    context.log.call("MPI_Isend", bytes(ring), 0, recorded_location(x.send.memory), ring.type.name,
                     c.world_ranks[ring.right]);
  };
  if (receive_first) {
    post_receive(&requests[0]);
    post_send(&requests[1]);
  } else {
    post_send(&requests[1]);
    post_receive(&requests[0]);
  }
  context.expect_ok(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE), x.what + " (waitall)");
  context.log.call("MPI_Waitall");
  finish(context, x);
}

void persistent(Context& context, const Communicator& c) {
  Exchange x = begin(context, c, "MPI_Send_init/MPI_Recv_init");
  const Ring& ring = x.ring;
  MPI_Request requests[2];
  context.expect_ok(
      MPI_Recv_init(x.recv.data, x.count, ring.type.type, ring.left, ring.tag, c.comm, &requests[0]), x.what);
  context.log.call("MPI_Recv_init", 0, 0, recorded_location(x.recv.memory), ring.type.name,
                   c.world_ranks[ring.left]);
  context.expect_ok(
      MPI_Send_init(x.send.data, x.count, ring.type.type, ring.right, ring.tag, c.comm, &requests[1]),
      x.what);
  context.log.call("MPI_Send_init", 0, 0, recorded_location(x.send.memory), ring.type.name,
                   c.world_ranks[ring.right]);
  for (int round = 0; round < 2; ++round) {
    // Each start receives anew: the second round's receive buffer is poisoned again first.
    if (round == 1) {
      const std::vector<char> garbage(ring.count * static_cast<std::size_t>(ring.type.size),
                                      static_cast<char>(0x11));
      BufferFactory::write(x.recv, 0, garbage.data(), garbage.size());
    }
    context.expect_ok(MPI_Startall(2, requests), x.what + " (startall)");
    context.log.call("MPI_Startall");
    context.expect_ok(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE), x.what + " (waitall)");
    context.log.call("MPI_Waitall");
    expect_elements(context, x.recv, 0, ring.count, ring.type, message(ring, ring.left),
                    x.what + " round " + std::to_string(round));
  }
  for (MPI_Request& request : requests) {
    context.expect_ok(MPI_Request_free(&request), x.what + " (free)");
    context.log.call("MPI_Request_free");
  }
  release(context, x);
}

void matched_probe(Context& context, const Communicator& c) {
  Exchange x = begin(context, c, "MPI_Mprobe/MPI_Mrecv");
  const Ring& ring = x.ring;
  MPI_Request request;
  context.expect_ok(MPI_Isend(x.send.data, x.count, ring.type.type, ring.right, ring.tag, c.comm, &request),
                    x.what);
  context.log.call("MPI_Isend", bytes(ring), 0, recorded_location(x.send.memory), ring.type.name,
                   c.world_ranks[ring.right]);
  MPI_Message handle;
  MPI_Status status;
  context.expect_ok(MPI_Mprobe(ring.left, ring.tag, c.comm, &handle, &status), x.what + " (mprobe)");
  context.log.call("MPI_Mprobe");
  int probed = 0;
  MPI_Get_count(&status, ring.type.type, &probed);
  if (probed != x.count) {
    context.mismatch(x.what + ": probed count " + std::to_string(probed), -1);
  }
  context.expect_ok(MPI_Mrecv(x.recv.data, x.count, ring.type.type, &handle, MPI_STATUS_IGNORE),
                    x.what + " (mrecv)");
  context.log.call("MPI_Mrecv", 0, bytes(ring), recorded_location(x.recv.memory), ring.type.name,
                   c.world_ranks[ring.left]);
  context.expect_ok(MPI_Wait(&request, MPI_STATUS_IGNORE), x.what + " (wait)");
  context.log.call("MPI_Wait");
  finish(context, x);
}

} // namespace

void add_point_to_point(std::vector<NamedOperation>& list) {
  list.insert(list.end(), {{"sendrecv", sendrecv},
                           {"isend_irecv", nonblocking},
                           {"persistent", persistent},
                           {"mprobe_mrecv", matched_probe}});
}

} // namespace fuzz
